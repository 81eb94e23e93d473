"""Model configurations: one dataclass per model, every field commented.

Checkpoints store `asdict(config)` and rebuild the model with `Config(**d)`, so
adding a field needs a default to keep old checkpoints loadable.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EncoderConfig:
    """Shape of a Transformer encoder stack; shared by both models."""

    vocab_size: int = 8000  # size of the (source) token vocabulary
    d_model: int = 256  # width of every residual stream vector
    n_heads: int = 4  # attention heads; d_model must divide by it (d_k = d_model / n_heads)
    n_layers: int = 3  # encoder layers
    d_ff: int = 1024  # inner width of the position-wise feed-forward network
    # Dropout on each sublayer's output and on embeddings + positional encoding (paper §5.4), and also on the
    # attention weights and inside the feed-forward network after the ReLU: those two are not in the paper's
    # text (they are in its tensor2tensor code and the Annotated Transformer); tests/tx/test_recipe.py pins them all.
    dropout: float = 0.1
    max_len: int = 256  # longest sequence the positional-encoding table covers
    pre_norm: bool = False  # False: post-LN as in the paper; True: pre-LN (LayerNorm before each sublayer)
    pad_id: int = 0  # token id used for padding; never attended to
    # Ablation knobs (the "Train your own" page): defaults are the paper's, so every existing checkpoint is unchanged.
    # False drops the sinusoidal positions: the encoder then sees a bag of tokens (sort still learns, reverse cannot).
    positional: bool = True
    # False drops the 1/√d_k of the attention scores: with wide heads the softmax saturates (paper §3.2.1's reason).
    scale_scores: bool = True

    def __post_init__(self) -> None:
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")


@dataclass
class Seq2SeqConfig(EncoderConfig):
    """Encoder-decoder translation model (the paper's base model, scaled down by default)."""

    tgt_vocab_size: int | None = None  # target vocabulary; None = same as vocab_size (joint vocabulary)
    n_decoder_layers: int | None = None  # decoder layers; None = same as n_layers
    share_embeddings: bool = True  # tie source, target and generator weights (paper §3.4); needs a joint vocabulary

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tgt_vocab_size is None:
            self.tgt_vocab_size = self.vocab_size
        if self.n_decoder_layers is None:
            self.n_decoder_layers = self.n_layers
        if self.share_embeddings and self.tgt_vocab_size != self.vocab_size:
            raise ValueError("share_embeddings needs vocab_size == tgt_vocab_size (a joint vocabulary)")


@dataclass
class ClassifierConfig(EncoderConfig):
    """Encoder + pooling + linear head for sequence classification (sentiment)."""

    n_classes: int = 2  # number of output labels
    pooling: str = "mean"  # "mean" over real tokens (pads excluded) or "max"
    # Logits are divided by it (temperature scaling, tx.calibration): 1.0 while training, then fitted on the
    # valid split so that the probabilities mean what they say; a positive divisor never changes a label.
    temperature: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.pooling not in ("mean", "max"):
            raise ValueError(f"pooling must be 'mean' or 'max', got {self.pooling!r}")
        if not self.temperature > 0:
            raise ValueError(f"temperature must be positive, got {self.temperature!r}")


@dataclass
class MaskedLMConfig(EncoderConfig):
    """Encoder + tied output layer, pretrained to predict masked tokens (BERT's objective) before the
    classifier is fine-tuned from its embeddings and layers. No extra fields: the head's shape follows
    from d_model and vocab_size."""
