"""Text in, text out: translation and sentiment over any backend (onnxruntime in `runtime.onnx_models`,
PyTorch in `tx.inference`).

`TextTranslator` and `TextClassifier` do everything between a string and the model: tokenising,
the language tag, truncation, batching and padding, decoding, detokenising, and cutting pads
off attention maps.

Bad input raises `ValueError` with a message meant for the user: empty or whitespace-only text
("empty text: ..."), an unsupported language pair, an unknown method. Over-long text is cut to
the model's maximum length and flagged `truncated=True`; any other string (emoji, CJK, control
characters) goes through the tokenizer as it is.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .batching import batches_by_length, pad
from .coverage import coverage
from .coverage import warning as coverage_warning
from .decoding import DecoderBackend, Hypothesis, beam_search, greedy, normalized_score, sample

DEFAULT_DIRECTIONS = [["de", "en"], ["en", "de"]]
DEFAULT_MAX_SRC_LEN = 128
METHODS = ("beam", "greedy", "sample")
# What translate(attention=...) records: nothing; the cross-attention of the search's own steps; or every map
# (encoder, decoder self, cross) from one extra teacher-forced pass over the chosen output.
ATTENTION = ("none", "cross", "all")
ATTENTION_KINDS = ("encoder", "self", "cross")


class TextTokenizer(Protocol):
    """What the wrappers need from `runtime.tokenizer.Tokenizer`."""

    pad_id: int
    bos_id: int
    eos_id: int
    vocab_size: int

    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    def tokens(self, ids: Sequence[int]) -> list[str]: ...
    def id_to_token(self, i: int) -> str: ...
    def token_to_id(self, token: str) -> int | None: ...


@dataclass
class Translation:
    """One translated text.

    `token_ids`/`tokens`: what the model generated, the final `</s>` included when it ended
    by itself (BOS excluded). `src_tokens`: what the encoder saw, `<2xx>` tag and `</s>` included.
    `score`: log P(tokens) / ((5 + len) / 6) ** length_penalty, the same for every method.
    `token_probs`: the model's probability of each generated token when it chose it; `confidence`:
    their geometric mean, exp(mean log-probability), in (0, 1]: the model's own per-token certainty
    (how it relates to being right is measured per model: `tx.confidence`).
    `attention` (None unless asked for): always the keys "encoder": L × (H, S, S), "self": L × (H, T, T),
    "cross": L × (H, T, S), with S = len(src_tokens), T = len(tokens); row t is the step that
    produced tokens[t], whose decoder input was ["<s>"] + tokens[:-1] at position t. With
    attention="cross" only "cross" is filled (recorded by the search itself, no second pass), the others None.
    """

    text: str
    tokens: list[str]
    token_ids: list[int]
    score: float
    src_tokens: list[str]
    truncated: bool
    attention: dict[str, list[np.ndarray] | None] | None = None
    warning: str | None = None  # set when the source is mostly outside what the model knows (runtime.coverage)
    token_probs: list[float] = field(default_factory=list)
    confidence: float = 0.0


def confidence_of(token_log_probs: Sequence[float]) -> float:
    """exp(mean log-probability): the geometric mean of the token probabilities (0 for no tokens)."""
    return float(np.exp(np.mean(token_log_probs))) if len(token_log_probs) else 0.0


def search_cross_attention(maps: np.ndarray, src_len: int) -> list[np.ndarray]:
    """A hypothesis' recorded (T, L, H, S) cross-attention -> L × (H, T, src_len), pads cut."""
    per_layer = np.asarray(maps, dtype=np.float32).transpose(1, 2, 0, 3)  # (T, L, H, S) -> (L, H, T, S)
    return [layer[:, :, :src_len] for layer in per_layer]


@dataclass
class Prediction:
    """One classified text: the most probable label, every label's probability, the tokens the
    model saw, and (when asked for) per-layer encoder self-attention (H, S, S) over those tokens."""

    label: str
    probs: dict[str, float]
    tokens: list[str]
    truncated: bool
    attention: list[np.ndarray] | None = None
    warning: str | None = None  # set when the text is mostly outside what the model knows (runtime.coverage)


def check_texts(texts: Sequence[str]) -> None:
    """Reject what cannot be translated or classified, with a message a user can act on."""
    if isinstance(texts, str):
        raise ValueError("expected a list of texts, got a single string: wrap it in a list")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"text #{i} is a {type(text).__name__}, not a string")
        if not text.strip():
            raise ValueError(f"empty text: text #{i} is empty or only whitespace")


def language_tag_id(tokenizer: TextTokenizer, lang: str) -> int:
    """The id of `<2xx>`, the target-language tag that starts every source."""
    tag = f"<2{lang}>"
    tag_id = tokenizer.token_to_id(tag)
    if tag_id is None:
        raise ValueError(f"the tokenizer has no language tag {tag}")
    return tag_id


class TextTranslator:
    """Translate plain text with any `DecoderBackend` (see module docstring for input handling).

    meta: the model directory's translation meta, {"directions": [[src, tgt], ...], "max_src_len": n}.
    """

    def __init__(self, backend: DecoderBackend, tokenizer: TextTokenizer, meta: dict[str, Any]):
        self.backend, self.tokenizer, self.meta = backend, tokenizer, meta
        self.directions = [tuple(d) for d in meta.get("directions", DEFAULT_DIRECTIONS)]
        limit = backend.max_source_len
        self.max_src_len = min(int(meta.get("max_src_len", DEFAULT_MAX_SRC_LEN)), limit or 10**9)
        self.tag_ids = {tgt: language_tag_id(tokenizer, tgt) for _, tgt in self.directions}

    def translate(self, texts: Sequence[str], src_lang: str = "de", tgt_lang: str = "en", method: str = "beam",
                  beam: int = 4, length_penalty: float = 0.6, max_len: int | None = None, temperature: float = 1.0,
                  top_k: int = 0, top_p: float = 1.0, seed: int | None = None,
                  attention: str = "none", patience: float | None = None) -> list[Translation]:
        """Translate each text; results come back in input order.

        method: "beam" (beam size `beam`, GNMT `length_penalty`, `patience`: None = exact stopping, a number =
        CTranslate2's rule, see `beam_search`), "greedy", or "sample" (`temperature`, `top_k` 0 = off,
        `top_p` 1.0 = off, `seed` for a reproducible draw).
        max_len: most target tokens per text; None = its source length + 50.
        attention: "none"; "cross" (recorded by the search itself, no extra pass); "all" (every kind of map,
        from one extra teacher-forced pass). See `Translation.attention`.
        Raises ValueError for empty/whitespace-only text (message starts with "empty text"),
        a direction the model was not trained for, or an unknown method.
        """
        check_texts(texts)
        self.check_settings(src_lang, tgt_lang, method, attention)
        recorded = attention == "cross"  # cross-attention from the search's own steps
        sources = [self.source_ids(text, tgt_lang) for text in texts]
        results: list[Translation | None] = [None] * len(texts)
        for chunk_no, chunk in enumerate(batches_by_length([len(ids) for ids, _ in sources])):
            src_ids, src_mask = pad([sources[i][0] for i in chunk], self.tokenizer.pad_id)
            hyps = self.search(src_ids, src_mask, method, beam, length_penalty, max_len, temperature, top_k, top_p,
                               None if seed is None else seed + chunk_no, recorded, patience)
            maps = self.attention_maps(src_ids, src_mask, [h.tokens for h in hyps]) if attention == "all" else None
            for row, (i, hyp) in enumerate(zip(chunk, hyps, strict=True)):
                src, truncated = sources[i]
                results[i] = Translation(
                    text=self.tokenizer.decode(hyp.tokens),
                    tokens=self.tokenizer.tokens(hyp.tokens),
                    token_ids=hyp.tokens,
                    score=normalized_score(hyp.log_prob, len(hyp.tokens), length_penalty),
                    src_tokens=self.tokenizer.tokens(src),
                    truncated=truncated,
                    attention={"encoder": None, "self": None, "cross": search_cross_attention(hyp.attention, len(src))}
                    if recorded else None if maps is None else cut_pads(maps, row, len(src), len(hyp.tokens)),
                    warning=coverage_warning(coverage(texts[i], self.tokenizer.tokens(src[1:-1]))),
                    token_probs=[float(np.exp(lp)) for lp in hyp.token_log_probs],
                    confidence=confidence_of(hyp.token_log_probs),
                )
        return results  # type: ignore[return-value]

    def check_settings(self, src_lang: str, tgt_lang: str, method: str, attention: str) -> None:
        """Raise ValueError, with the sentence a user sees, for settings this model cannot translate with (the
        service checks each request with it before the request joins a batch)."""
        if not isinstance(attention, str) or attention not in ATTENTION:
            raise ValueError(f"attention must be one of {', '.join(map(repr, ATTENTION))}, got {attention!r}")
        if (src_lang, tgt_lang) not in self.directions:
            supported = ", ".join(f"{s}->{t}" for s, t in self.directions)
            raise ValueError(f"this model translates {supported}, not {src_lang}->{tgt_lang}")
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")

    @property
    def source_room(self) -> int:
        """The most source tokens a text keeps: max_src_len less the language tag and </s>, which always stay."""
        return self.max_src_len - 2

    def source_ids(self, text: str, tgt_lang: str) -> tuple[list[int], bool]:
        """[<2tgt>] + encode(text) + [</s>], cut to max_src_len; and whether it was cut."""
        body = self.tokenizer.encode(text)
        room = self.source_room
        return [self.tag_ids[tgt_lang]] + body[:room] + [self.tokenizer.eos_id], len(body) > room

    def search(self, src_ids: np.ndarray, src_mask: np.ndarray, method: str, beam: int, length_penalty: float,
               max_len: int | None, temperature: float, top_k: int, top_p: float, seed: int | None,
               attention: bool = False, patience: float | None = None) -> list[Hypothesis]:
        common = dict(bos_id=self.tokenizer.bos_id, eos_id=self.tokenizer.eos_id, attention=attention)
        if method == "beam":
            return beam_search(self.backend, src_ids, src_mask, max_len, beam=beam, length_penalty=length_penalty,
                               patience=patience, **common)
        if method == "greedy":
            return greedy(self.backend, src_ids, src_mask, max_len, **common)
        return sample(self.backend, src_ids, src_mask, max_len, temperature=temperature, top_k=top_k, top_p=top_p,
                      seed=seed, **common)

    def attention_maps(self, src_ids: np.ndarray, src_mask: np.ndarray,
                       outputs: list[list[int]]) -> dict[str, list[np.ndarray]]:
        """Teacher-forced attention for the chosen outputs: decoder inputs are <s> + output[:-1]."""
        inputs = [[self.tokenizer.bos_id] + out[:-1] for out in outputs]
        # Pads come after each row's real steps, so causal masking keeps them out of the real rows.
        tgt_ids, _ = pad(inputs, self.tokenizer.pad_id)
        return self.backend.attention(src_ids, src_mask, tgt_ids)


def cut_pads(maps: dict[str, list[np.ndarray]], row: int, src_len: int, tgt_len: int) -> dict[str, list[np.ndarray]]:
    """One row of batched attention maps without the padded positions."""
    return {
        "encoder": [w[row, :, :src_len, :src_len] for w in maps["encoder"]],  # (B, H, S, S) -> (H, s, s)
        "self": [w[row, :, :tgt_len, :tgt_len] for w in maps["self"]],  # (B, H, T, T) -> (H, t, t)
        "cross": [w[row, :, :tgt_len, :src_len] for w in maps["cross"]],  # (B, H, T, S) -> (H, t, s)
    }


# ids (B, S) int64, mask (B, S) bool, need_weights -> (logits or probs (B, C), L × (B, H, S, S) or None)
LogitsFn = Callable[[np.ndarray, np.ndarray, bool], tuple[Any, list[Any] | None]]


class TextClassifier:
    """Classify plain text with any `logits_fn` (see `LogitsFn`); input handling as in the module docstring.

    meta: the model directory's sentiment meta, {"labels": [...], "max_len": n}.
    returns: "logits" if logits_fn returns logits (softmaxed here), "probs" if it returns probabilities.
    max_positions: the model's own length limit, when tighter than meta's max_len.
    """

    def __init__(self, logits_fn: LogitsFn, tokenizer: TextTokenizer, meta: dict[str, Any], returns: str = "logits",
                 max_positions: int | None = None):
        if returns not in ("logits", "probs"):
            raise ValueError(f"returns must be 'logits' or 'probs', got {returns!r}")
        if not meta.get("labels"):
            raise ValueError("classifier meta has no 'labels'")
        self.logits_fn, self.tokenizer, self.meta, self.returns = logits_fn, tokenizer, meta, returns
        self.labels: list[str] = list(meta["labels"])
        self.max_len = min(int(meta.get("max_len", DEFAULT_MAX_SRC_LEN)), max_positions or 10**9)

    def classify(self, texts: Sequence[str], attention: bool = False) -> list[Prediction]:
        """One Prediction per text, in input order. Raises ValueError for empty/whitespace-only text."""
        check_texts(texts)
        encoded = [self.tokenizer.encode(text) for text in texts]
        results: list[Prediction | None] = [None] * len(texts)
        for chunk in batches_by_length([min(len(ids), self.max_len) for ids in encoded]):
            ids, mask = pad([encoded[i][:self.max_len] for i in chunk], self.tokenizer.pad_id)
            outputs, weights = self.logits_fn(ids, mask, attention)
            probs = self.to_probs(np.asarray(outputs, dtype=np.float64))
            for row, i in enumerate(chunk):
                kept = encoded[i][:self.max_len]
                results[i] = Prediction(
                    label=self.labels[int(probs[row].argmax())],
                    probs={label: float(p) for label, p in zip(self.labels, probs[row], strict=True)},
                    tokens=self.tokenizer.tokens(kept),
                    truncated=len(encoded[i]) > self.max_len,
                    attention=None if weights is None else
                    [np.asarray(w)[row, :, :len(kept), :len(kept)] for w in weights],  # (B, H, S, S) -> (H, s, s)
                    warning=coverage_warning(coverage(texts[i], self.tokenizer.tokens(encoded[i]))),
                )
        return results  # type: ignore[return-value]

    def to_probs(self, outputs: np.ndarray) -> np.ndarray:
        if outputs.ndim != 2 or outputs.shape[1] != len(self.labels):
            raise ValueError(f"the model gives {outputs.shape[-1]} scores per text but meta names "
                             f"{len(self.labels)} labels ({', '.join(self.labels)})")
        if self.returns == "probs":
            return outputs
        shifted = np.exp(outputs - outputs.max(axis=1, keepdims=True))  # softmax, stable for large logits
        return shifted / shifted.sum(axis=1, keepdims=True)
