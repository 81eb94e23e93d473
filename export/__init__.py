"""ONNX export of the tx models, its validation, int8 quantisation, and the onnxruntime inference API.

`python -m export MODEL_DIR` writes MODEL_DIR/onnx/; `OnnxTranslator` / `OnnxSentimentClassifier`
run those files (see export/README.md).
"""
from .model_files import ModelLoadError
from .providers import ProviderError
from .runtime import OnnxSentimentClassifier, OnnxTranslator

__all__ = ["OnnxTranslator", "OnnxSentimentClassifier", "ModelLoadError", "ProviderError"]
