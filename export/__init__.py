"""export: building the ONNX files of the tx models — export, validation against PyTorch, int8 quantisation,
benchmarks against PyTorch and CTranslate2, and a Triton repository.

`python -m export MODEL_DIR` writes MODEL_DIR/onnx/; the runtime package (`runtime.OnnxTranslator`,
`runtime.OnnxSentimentClassifier`) runs those files.
"""
