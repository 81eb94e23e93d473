"""tx: the Transformer of "Attention Is All You Need", from scratch in PyTorch."""
from .attention import MultiHeadAttention, attention, fast_attention
from .checkpoint import (
    CheckpointError,
    build_model,
    load_checkpoint,
    load_model,
    load_model_dir,
    read_model_config,
    save_checkpoint,
    save_model_dir,
)
from .config import ClassifierConfig, EncoderConfig, Seq2SeqConfig
from .layers import (
    Decoder,
    DecoderLayer,
    Embeddings,
    Encoder,
    EncoderLayer,
    FeedForward,
    LayerCache,
    PositionalEncoding,
    Residual,
)
from .masks import causal_mask, key_mask, padding_mask
from .model import SentimentClassifier, Seq2SeqTransformer

__all__ = [
    "attention", "fast_attention", "MultiHeadAttention",
    "EncoderConfig", "Seq2SeqConfig", "ClassifierConfig",
    "PositionalEncoding", "Embeddings", "FeedForward", "Residual",
    "EncoderLayer", "DecoderLayer", "Encoder", "Decoder", "LayerCache",
    "Seq2SeqTransformer", "SentimentClassifier",
    "padding_mask", "key_mask", "causal_mask",
    "CheckpointError", "build_model", "save_checkpoint", "load_checkpoint", "load_model",
    "save_model_dir", "load_model_dir", "read_model_config",
]
