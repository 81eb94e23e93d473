"""The models: an encoder-decoder translator, and two encoder-only ones (a classifier, and the masked language
model it can be pretrained as).

`forward` returns logits only; losses live in the training code.
"""
from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor, nn

from .attention import MultiHeadAttention
from .config import ClassifierConfig, EncoderConfig, MaskedLMConfig, Seq2SeqConfig
from .layers import Decoder, Embeddings, Encoder, LayerCache, PositionalEncoding
from .masks import causal_mask, padding_mask


class Encoded(NamedTuple):
    """What `encode` returns (`Seq2SeqTransformer`'s and `EncoderModel`'s), whether or not weights were asked for."""

    memory: Tensor  # (B, S, D) encoder output
    weights: list[Tensor] | None  # L × (B, H, S, S) self-attention weights with need_weights, else None


class Decoded(NamedTuple):
    """What `Seq2SeqTransformer.decode` returns, whether or not weights were asked for."""

    hidden: Tensor  # (B, T, D) decoder states of the new positions (the generator turns them into logits)
    cache: list[LayerCache]  # per decoder layer, now covering every target position so far
    weights: dict[str, list[Tensor]] | None  # {"self": L × (B, H, T, P+T), "cross": L × (B, H, T, S)} or None


class Classified(NamedTuple):
    """What `SentimentClassifier.classify` returns."""

    logits: Tensor  # (B, C), already divided by the calibration temperature
    weights: list[Tensor] | None  # L × (B, H, S, S) self-attention weights with need_weights, else None


def apply_ablations(model: nn.Module, config: EncoderConfig) -> None:
    """Set EncoderConfig's ablation knobs on the built modules. Done after construction so that every layer
    constructor keeps the paper's signature; with the defaults nothing changes."""
    model.positional.enabled = config.positional
    for module in model.modules():
        if isinstance(module, MultiHeadAttention):
            module.scale = None if config.scale_scores else 1.0


def xavier_init(module: nn.Module) -> None:
    """Xavier-uniform every matrix (embeddings and projections); vectors keep PyTorch's defaults."""
    for p in module.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)


class Seq2SeqTransformer(nn.Module):
    """The paper's encoder-decoder with a KV-cached `decode` for incremental generation.

    Masks passed in are (B, S) booleans over source tokens, True = real token; the
    causal target mask is built inside `decode` unless one is given.
    """

    def __init__(self, config: Seq2SeqConfig):
        super().__init__()
        c = self.config = config
        self.src_embed = Embeddings(c.vocab_size, c.d_model)
        self.tgt_embed = self.src_embed if c.share_embeddings else Embeddings(c.tgt_vocab_size, c.d_model)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.encoder = Encoder(c.n_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.pre_norm)
        self.decoder = Decoder(c.n_decoder_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.pre_norm)
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        apply_ablations(self, c)
        xavier_init(self)
        if c.share_embeddings:
            self.generator.weight = self.src_embed.table.weight  # one matrix for source, target and output

    def source_mask(self, src: Tensor) -> Tensor:
        return padding_mask(src, self.config.pad_id)

    def encode(self, src: Tensor, src_mask: Tensor | None = None, need_weights: bool = False) -> Encoded:
        """src (B, S) -> Encoded(memory (B, S, D), weights or None)."""
        if src_mask is None:
            src_mask = self.source_mask(src)
        return Encoded(*self.encoder(self.positional(self.src_embed(src)), src_mask, need_weights))

    def init_cache(self, memory: Tensor) -> list[LayerCache]:
        """An empty self-attention cache plus the cross-attention K/V of `memory`, per decoder layer."""
        b = memory.size(0)
        h, k = self.config.n_heads, self.config.d_model // self.config.n_heads
        empty = memory.new_zeros(b, h, 0, k)  # (B, H, 0, K): no past positions yet
        return [(empty, empty, *layer.cross_attn.project_kv(memory)) for layer in self.decoder.layers]

    def decode(self, tgt: Tensor, memory: Tensor | None, src_mask: Tensor, tgt_mask: Tensor | None = None,
               cache: list[LayerCache] | None = None, need_weights: bool = False) -> Decoded:
        """Run the decoder on new target tokens tgt (B, T) after the cached positions.

        Returns Decoded(hidden (B, T, D), cache covering every position so far, weights or None).
        `memory` is only read when no cache is given (the cache holds its K/V).
        """
        if cache is None:
            cache = self.init_cache(memory)
        past = cache[0][0].size(2)
        if tgt_mask is None:
            tgt_mask = causal_mask(tgt.size(1), past, device=tgt.device)
        x = self.positional(self.tgt_embed(tgt), offset=past)
        return Decoded(*self.decoder(x, cache, src_mask, tgt_mask, need_weights))

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """Teacher-forced logits (B, T, V) for target inputs tgt (B, T)."""
        if src_mask is None:
            src_mask = self.source_mask(src)
        memory = self.encode(src, src_mask).memory
        return self.generator(self.decode(tgt, memory, src_mask).hidden)


class EncoderModel(nn.Module):
    """Token embeddings, positional encoding and the encoder stack, under the module names both encoder-only
    models share (embed, positional, encoder): a pretrained `MaskedLanguageModel`'s weights load into a
    `SentimentClassifier` as they are. Subclasses add their head, then `xavier_init`."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        c = self.config = config
        self.embed = Embeddings(c.vocab_size, c.d_model)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.encoder = Encoder(c.n_layers, c.d_model, c.n_heads, c.d_ff, c.dropout, c.pre_norm)
        apply_ablations(self, c)

    def encode(self, input_ids: Tensor, keep: Tensor, need_weights: bool = False) -> Encoded:
        """input_ids (B, S), keep (B, S) True at real tokens -> Encoded(states (B, S, D), weights or None)."""
        return Encoded(*self.encoder(self.positional(self.embed(input_ids)), keep, need_weights))


class SentimentClassifier(EncoderModel):
    """Encoder, pooling over real tokens (mean, or max), dropout, linear head -> class logits."""

    def __init__(self, config: ClassifierConfig):
        super().__init__(config)
        self.dropout = nn.Dropout(config.dropout)
        self.head = nn.Linear(config.d_model, config.n_classes)
        xavier_init(self)

    def pool(self, x: Tensor, keep: Tensor) -> Tensor:
        """(B, S, D) token states -> (B, D), ignoring pads; an all-pad row pools to zeros."""
        m = keep[..., None].to(x.dtype)  # (B, S) -> (B, S, 1)
        if self.config.pooling == "max":
            masked = x.masked_fill(m == 0, float("-inf"))
            return masked.amax(dim=1).nan_to_num(0.0, posinf=0.0, neginf=0.0)
        return (x * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)

    def classify(self, input_ids: Tensor, attention_mask: Tensor | None = None,
                 need_weights: bool = False) -> Classified:
        """input_ids (B, S), attention_mask (B, S) True/1 at real tokens -> Classified(logits (B, C), weights)."""
        keep = padding_mask(input_ids, self.config.pad_id) if attention_mask is None else attention_mask.bool()
        x, weights = self.encode(input_ids, keep, need_weights)
        return Classified(self.head(self.dropout(self.pool(x, keep))) / self.config.temperature, weights)

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None) -> Tensor:
        """Logits (B, C) only: what training and the lean exports need."""
        return self.classify(input_ids, attention_mask).logits


class MaskedLanguageModel(EncoderModel):
    """The classifier's encoder (an `EncoderModel` too) plus BERT's prediction head: a dense layer, ReLU,
    LayerNorm, then scores over the vocabulary with the embedding matrix itself (tied, as in the paper's §3.4)
    and a bias. Pretrained with `python -m tx train pretrain`."""

    def __init__(self, config: MaskedLMConfig):
        super().__init__(config)
        d = config.d_model
        self.transform = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.LayerNorm(d))
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))
        xavier_init(self)

    def forward(self, input_ids: Tensor, select: Tensor | None = None) -> Tensor:
        """input_ids (B, S) -> vocabulary logits (B, S, V), or (N, V) at the N positions where
        `select` (B, S) is True: the loss needs only the masked ones, and the (D, V) product is
        most of the cost."""
        keep = padding_mask(input_ids, self.config.pad_id)
        x = self.encode(input_ids, keep).memory
        if select is not None:
            x = x[select]  # (B, S, D) -> (N, D)
        return self.transform(x) @ self.embed.table.weight.T + self.bias  # (..., D) @ (D, V) -> (..., V)
