"""What the Streamlit pages share, one module per job; a page imports each module it uses and calls its helpers
through it (`models.onnx_model(...)`, `figures.heatmap(...)`), so every call shows where the helper lives:

- `models`: where the models are, loading them once per process, friendly load errors, the page list;
- `inputs`: text in, examples, CSV in and out;
- `latency/`: the Latency page (report: its words, table and figure; measure; the PyTorch column);
- `model_card/`: the Model card and Home's model lines (metrics.json, the export report, the README,
  the parameter count of a model.pt read without torch);
- `figures`: the plotly figures.

Inference is `runtime`'s (numpy + onnxruntime): nothing here imports torch, `tx` or `export`. Only the Latency
page's PyTorch column (latency/pytorch.py) imports torch, inside a function, and says how to install
it where it is missing.
"""
