"""What the Streamlit pages share, one module per job; a page imports each module it uses and calls its helpers
through it (`models.onnx_model(...)`, `figures.heatmap(...)`), so every call shows where the helper lives:

- `models`: where the models are, loading them once per process, friendly load errors, the page list;
- `inputs`: text in, examples, CSV in and out;
- `cards`: metrics.json, the export and bench reports, the README model card, confidence;
- `figures`: the plotly figures;
- `weights`: the parameter count of a model.pt, read without torch.

Inference is `runtime`'s (numpy + onnxruntime): nothing here imports torch, `tx` or `export`. Only the Latency
page's PyTorch column imports torch, inside a function, and says how to install it where it is missing.
"""
