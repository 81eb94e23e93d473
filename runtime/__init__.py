"""runtime: the onnxruntime inference API for the exported tx models — numpy, onnxruntime and tokenizers only.

    from runtime import OnnxTranslator, OnnxSentimentClassifier
    translator = OnnxTranslator("models/translate", provider="auto", precision="int8")
    [t] = translator.translate(["Wo ist der Bahnhof?"], src_lang="de", tgt_lang="en", method="beam")
    print(t.text, translator.provider)  # the provider that really runs (session.get_providers())
    # steering (docs/steering.md): the 5 likeliest words after "Where", each completed greedily
    [alternatives] = translator.translate_n_best(["Wo ist der Bahnhof?"], method="greedy", target_prefix=["Where"],
                                                 return_alternatives=True, num_hypotheses=5)

Nothing here imports torch: a service that serves the exported graphs installs `pip install .` alone
(the ONNX files themselves are built by `export/`, which needs the `[train]` extra).
"""
from .alignment import AlignmentHeads, WordAlignment
from .model_files import CheckpointError, ModelLoadError, read_model_config
from .onnx_models import OnnxSentimentClassifier, OnnxTranslator
from .providers import ProviderError
from .text import ATTENTION, METHODS, Prediction, Translation

__all__ = ["OnnxTranslator", "OnnxSentimentClassifier", "Translation", "Prediction", "METHODS", "ATTENTION",
           "ModelLoadError", "CheckpointError", "ProviderError", "read_model_config", "WordAlignment", "AlignmentHeads"]
