"""Text in, text out: translation and sentiment over any backend (onnxruntime in `runtime.onnx_models`,
PyTorch in `tx.inference`).

`TextTranslator` and `TextClassifier` do everything between a string and the model: tokenising,
the language tag, truncation, batching and padding, decoding, detokenising, and cutting pads
off attention maps.

Steering, with CTranslate2's option names (`TextTranslator.translate_n_best`): a forced `target_prefix` per text,
`num_hypotheses` (the n best), `return_alternatives` (the likeliest next tokens after the prefix, each completed),
and `alignment` (target words to source words from cross-attention, `runtime.alignment`). The options are checked
in `runtime.steering_checks`, a text's warnings written in `runtime.input_warnings`.

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

from .alignment import WordAlignment, align
from .batching import batches_by_length, pad
from .coverage import coverage
from .coverage import warning as coverage_warning
from .decoding import (
    DEFAULT_EXTRA_LEN,
    DecoderBackend,
    Hypothesis,
    beam_search,
    greedy,
    normalized_score,
    prefix_log_probs,
    sample,
)
from .input_warnings import input_warnings
from .steering_checks import MAX_ALTERNATIVES as MAX_ALTERNATIVES  # callers import the checks from here too
from .steering_checks import MAX_SAMPLES as MAX_SAMPLES
from .steering_checks import check_room, check_steering

DEFAULT_DIRECTIONS = [["de", "en"], ["en", "de"]]
DEFAULT_MAX_SRC_LEN = 128
METHODS = ("beam", "greedy", "sample")
# What translate(attention=...) records: nothing; the cross-attention of the search's own steps; or every map
# (encoder, decoder self, cross) from one extra teacher-forced pass over the chosen output.
ATTENTION = ("none", "cross", "all")
ATTENTION_KINDS = ("encoder", "self", "cross")
WIDEST_BEAM = 16  # n-best lists: the widest beam searched again when equal texts merged leave fewer than n


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
    `prefix_len`: tokens[:prefix_len] were forced (`target_prefix`); with return_alternatives, tokens[prefix_len]
    is the alternative and token_probs[prefix_len] its probability. `alignment` (alignment=True): for each target
    word the source word(s) it aligns to, read from cross-attention (`runtime.alignment`).
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
    prefix_len: int = 0  # how many of the first tokens were forced by target_prefix (0: none)
    alignment: WordAlignment | None = None  # per target word, the source word(s) it aligns to (alignment=True)


@dataclass(frozen=True)
class SearchOptions:
    """What every search of one translate call shares (grouped so the steering paths pass one value)."""

    method: str  # "beam", "greedy" or "sample"
    beam: int  # beam size (method "beam")
    length_penalty: float  # GNMT alpha (method "beam"; every score is normalised with it)
    max_len: int | None  # most target tokens per text, a prefix included; None: source length + 50
    temperature: float  # method "sample"
    top_k: int  # method "sample": 0 = off
    top_p: float  # method "sample": 1.0 = off
    patience: float | None  # method "beam": None = exact stopping
    num_hypotheses: int  # translations per text (or alternatives, with return_alternatives)
    attention: bool  # record the search's cross-attention


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
                  attention: str = "none", patience: float | None = None,
                  target_prefix: Sequence[str | None] | None = None, alignment: bool = False) -> list[Translation]:
        """Translate each text; results come back in input order.

        method: "beam" (beam size `beam`, GNMT `length_penalty`, `patience`: None = exact stopping, a number =
        CTranslate2's rule, see `beam_search`), "greedy", or "sample" (`temperature`, `top_k` 0 = off,
        `top_p` 1.0 = off, `seed` for a reproducible draw).
        max_len: most target tokens per text, a forced prefix included; None = its source length + 50.
        attention: "none"; "cross" (recorded by the search itself, no extra pass); "all" (every kind of map,
        from one extra teacher-forced pass). See `Translation.attention`.
        target_prefix: per text, a string in the target language the translation must start with (None or ""
        = no prefix); see `translate_n_best`. alignment: fill `Translation.alignment` (runtime.alignment).
        Raises ValueError for empty/whitespace-only text (message starts with "empty text"),
        a direction the model was not trained for, an unknown method, or a bad prefix.
        """
        return [n_best[0] for n_best in self.translate_n_best(
            texts, src_lang, tgt_lang, method, beam, length_penalty, max_len, temperature, top_k, top_p, seed,
            attention, patience, target_prefix=target_prefix, alignment=alignment)]

    def translate_n_best(self, texts: Sequence[str], src_lang: str = "de", tgt_lang: str = "en",
                         method: str = "beam", beam: int = 4, length_penalty: float = 0.6, max_len: int | None = None,
                         temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, seed: int | None = None,
                         attention: str = "none", patience: float | None = None,
                         target_prefix: Sequence[str | None] | None = None, num_hypotheses: int = 1,
                         return_alternatives: bool = False, alignment: bool = False) -> list[list[Translation]]:
        """Per text, a list of translations (CTranslate2's `translate_batch` options, by its names); the other
        arguments as in `translate`, which is this method's first translation of each list.

        target_prefix: one entry per text: a string in the target language, tokenised as targets are (the
        tokenizer's pieces, no language tag), whose tokens every translation of the text starts with (forced,
        whatever the model would have chosen; then the method goes on). None or "" = no prefix. The forced
        tokens count like chosen ones, as in CTranslate2: their `token_probs` are the model's probabilities of
        them, and `score` and `confidence` include them. `Translation.prefix_len` says how many tokens were forced.
        num_hypotheses: how many translations per text. Beam search: the n best finished hypotheses
        (1 <= n <= beam), best score first, each a different text: hypotheses whose tokens differ but whose texts
        are equal ("▁me?" and "▁me ?") are merged, the best score kept, and where that leaves fewer than n one
        search with twice the beam (at most WIDEST_BEAM) adds texts not yet in the list, after the first
        search's; the list may still be shorter than n when no wider search finds more. The first is what
        `translate` returns. CTranslate2's n best are token-level (its lists may repeat a text), as are
        `runtime.decoding.beam_search(num_hypotheses=n)`'s, which equal them token for token (docs/steering.md).
        Greedy: 1 only. Sample: n independent draws, duplicates merged (so up to n), best score first.
        return_alternatives: at the position right after each text's prefix (a text without one: the first
        position, as in CTranslate2), the num_hypotheses most likely next tokens (1 <= n <= MAX_ALTERNATIVES),
        each completed to a whole translation by `method` (one batched search over all of them): token i of a
        translation is the alternative, i = its `prefix_len`, and `token_probs[prefix_len]` its probability; the
        list is sorted by that probability, most likely first.
        alignment: fill each translation's `alignment` (runtime.alignment.align; the search records the
        cross-attention it needs). A text's results do not depend on the texts batched with it, except with
        method="sample", whose draws follow the batch.
        Raises ValueError (besides `translate`'s cases) for num_hypotheses out of range, a target_prefix list of
        the wrong length, or a prefix that leaves no room within max_len; a prefix mostly in a script the model
        never read is translated with a `warning`.
        """
        check_texts(texts)
        self.check_settings(src_lang, tgt_lang, method, attention)
        check_steering(len(texts), method, beam, num_hypotheses, return_alternatives, target_prefix)
        recorded = attention == "cross" or alignment  # cross-attention from the search's own steps
        sources = [self.source_ids(text, tgt_lang) for text in texts]
        prefixes = [self.prefix_ids(None if target_prefix is None else target_prefix[i]) for i in range(len(texts))]
        for i, ((src, _), prefix) in enumerate(zip(sources, prefixes, strict=True)):
            self.check_room(i, len(prefix), self.target_limit(len(src), max_len), return_alternatives)
        options = SearchOptions(method, beam, length_penalty, max_len, temperature, top_k, top_p, patience,
                                num_hypotheses, recorded)
        results: list[list[Translation]] = [[] for _ in texts]
        for chunk_no, chunk in enumerate(batches_by_length([len(ids) for ids, _ in sources])):
            src_ids, src_mask = pad([sources[i][0] for i in chunk], self.tokenizer.pad_id)
            chunk_seed = None if seed is None else seed + chunk_no
            chunk_prefixes = [prefixes[i] for i in chunk]
            if return_alternatives:
                hyp_lists = self.alternatives(src_ids, src_mask, chunk_prefixes, options, chunk_seed)
            else:
                hyp_lists = self.search_n_best(src_ids, src_mask, chunk_prefixes, options, chunk_seed)
            maps = None
            if attention == "all":  # one teacher-forced pass over every hypothesis of the chunk
                rows = np.array([row for row, hyps in enumerate(hyp_lists) for _ in hyps], dtype=np.int64)
                outputs = [h.tokens for hyps in hyp_lists for h in hyps]
                maps = self.attention_maps(src_ids[rows], src_mask[rows], outputs)
            flat_row = 0
            for i, hyps in zip(chunk, hyp_lists, strict=True):
                # What every hypothesis of a text shares, computed once (alternatives: num_hypotheses of them)
                src_tokens = self.tokenizer.tokens(sources[i][0])
                warnings = input_warnings(texts[i], src_tokens, target_prefix and target_prefix[i],
                                      self.tokenizer.tokens(prefixes[i]))
                for hyp in hyps:
                    hyp_maps = None if maps is None else cut_pads(maps, flat_row, len(sources[i][0]), len(hyp.tokens))
                    results[i].append(self.result(sources[i], src_tokens, warnings, hyp, length_penalty, attention,
                                                  hyp_maps, len(prefixes[i]), alignment))
                    flat_row += 1
                if return_alternatives:  # by the alternative's own probability, ties in top-k order
                    results[i].sort(key=lambda t: -t.token_probs[t.prefix_len])
        return results

    def result(self, source: tuple[list[int], bool], src_tokens: list[str], warning: str | None, hyp: Hypothesis,
               length_penalty: float, attention: str, maps: dict[str, list[np.ndarray]] | None, prefix_len: int,
               alignment: bool) -> Translation:
        """One hypothesis as a `Translation` (attention maps and alignment included); src_tokens and warning:
        its text's, from `input_warnings`."""
        src, truncated = source
        tokens = self.tokenizer.tokens(hyp.tokens)
        cross = search_cross_attention(hyp.attention, len(src)) if hyp.attention is not None else None
        return Translation(
            text=self.tokenizer.decode(hyp.tokens),
            tokens=tokens,
            token_ids=hyp.tokens,
            score=normalized_score(hyp.log_prob, len(hyp.tokens), length_penalty),
            src_tokens=list(src_tokens),
            truncated=truncated,
            attention={"encoder": None, "self": None, "cross": cross} if attention == "cross" else maps,
            warning=warning,
            token_probs=[float(np.exp(lp)) for lp in hyp.token_log_probs],
            confidence=confidence_of(hyp.token_log_probs),
            prefix_len=prefix_len,
            alignment=align(cross, src_tokens, tokens) if alignment and cross is not None else None,
        )

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

    def prefix_ids(self, prefix: str | None) -> list[int]:
        """A target prefix's tokens: the target side's own tokenisation (no language tag, no </s>)."""
        if prefix is None or not prefix.strip():
            return []
        ids = self.tokenizer.encode(prefix)
        specials = {self.tokenizer.pad_id, self.tokenizer.bos_id, self.tokenizer.eos_id, *self.tag_ids.values()}
        if specials.intersection(ids):
            raise ValueError(f"the target prefix {prefix!r} contains a special token (</s>, <s>, <pad> or a "
                             f"language tag): a prefix is the start of a translation's text")
        return ids

    def target_limit(self, source_len: int, max_len: int | None) -> int:
        """The most target tokens a text of `source_len` tokens (tag and </s> included) may get: as
        `runtime.decoding.max_lengths` computes it."""
        limit = max_len if max_len is not None else source_len + DEFAULT_EXTRA_LEN
        return min(limit, self.backend.max_target_len or limit)

    check_room = staticmethod(check_room)  # the service checks a request's prefix with it

    def search(self, src_ids: np.ndarray, src_mask: np.ndarray, method: str, beam: int, length_penalty: float,
               max_len: int | None, temperature: float, top_k: int, top_p: float, seed: int | None,
               attention: bool = False, patience: float | None = None,
               target_prefix: Sequence[Sequence[int]] | None = None) -> list[Hypothesis]:
        """One hypothesis per row: the method's search, each row forced to start with its target_prefix."""
        common = dict(bos_id=self.tokenizer.bos_id, eos_id=self.tokenizer.eos_id, attention=attention,
                      target_prefix=target_prefix)
        if method == "beam":
            return beam_search(self.backend, src_ids, src_mask, max_len, beam=beam, length_penalty=length_penalty,
                               patience=patience, **common)
        if method == "greedy":
            return greedy(self.backend, src_ids, src_mask, max_len, **common)
        return sample(self.backend, src_ids, src_mask, max_len, temperature=temperature, top_k=top_k, top_p=top_p,
                      seed=seed, **common)

    def search_n_best(self, src_ids: np.ndarray, src_mask: np.ndarray, prefixes: list[list[int]],
                      o: SearchOptions, seed: int | None) -> list[list[Hypothesis]]:
        """Per row, its num_hypotheses best: beam search's n best, or n samples (distinct, best score first)."""
        n = o.num_hypotheses
        if o.method == "beam" and n > 1:
            return self.distinct_beam_n_best(src_ids, src_mask, prefixes, o)
        rows = np.repeat(np.arange(src_ids.shape[0]), n)  # sampling: n draws of each row, side by side
        hyps = self.search(src_ids[rows], src_mask[rows], o.method, o.beam, o.length_penalty, o.max_len,
                           o.temperature, o.top_k, o.top_p, seed, o.attention, o.patience,
                           [prefixes[r] for r in rows])
        grouped = [hyps[r * n:(r + 1) * n] for r in range(src_ids.shape[0])]
        if n == 1:
            return grouped
        return [sorted({tuple(h.tokens): h for h in reversed(g)}.values(),  # one per distinct output
                       key=lambda h: -normalized_score(h.log_prob, len(h.tokens), o.length_penalty)) for g in grouped]

    def distinct_beam_n_best(self, src_ids: np.ndarray, src_mask: np.ndarray, prefixes: list[list[int]],
                             o: SearchOptions) -> list[list[Hypothesis]]:
        """Beam search's n best, one per distinct text. Token-distinct hypotheses can read the same ("▁me?" and
        "▁me ?" both decode to "me?"): the best-scored of each text is kept. Where that leaves fewer than n, one
        search with twice the beam (at most WIDEST_BEAM) fills the list with texts not yet in it, after the first
        search's own, so the first stays what `translate` returns. A row's result depends on that row alone."""
        n, rows = o.num_hypotheses, list(range(src_ids.shape[0]))
        kept: list[list[Hypothesis]] = [[] for _ in rows]
        width, num = o.beam, n
        while rows:
            searched = beam_search(self.backend, src_ids[rows], src_mask[rows], max_len=o.max_len,
                                bos_id=self.tokenizer.bos_id, eos_id=self.tokenizer.eos_id, beam=width,
                                length_penalty=o.length_penalty, attention=o.attention, patience=o.patience,
                                target_prefix=[prefixes[r] for r in rows], num_hypotheses=num)
            for r, hyps in zip(rows, searched, strict=True):
                texts = {self.tokenizer.decode(h.tokens) for h in kept[r]}
                for hyp in hyps:  # best first
                    text = self.tokenizer.decode(hyp.tokens)
                    if len(kept[r]) < n and text not in texts:
                        kept[r].append(hyp)
                        texts.add(text)
            wider = min(2 * width, WIDEST_BEAM)
            if width != o.beam or wider == width:  # one wider search at most: its cost stays bounded (<= 3x)
                break
            rows, width, num = [r for r in rows if len(kept[r]) < n], wider, wider  # all it finishes may fill
        return kept

    def alternatives(self, src_ids: np.ndarray, src_mask: np.ndarray, prefixes: list[list[int]],
                     o: SearchOptions, seed: int | None) -> list[list[Hypothesis]]:
        """Per row, its num_hypotheses most likely next tokens after its prefix, each completed by the method.

        Greedy and sampling split each row into n at that position inside one search (the source encoded and the
        prefix decoded once). Beam search takes the n tokens from one teacher-forced pass, then runs one beam
        search over rows × n forced prefixes (prefix + alternative)."""
        n, common = o.num_hypotheses, dict(bos_id=self.tokenizer.bos_id, eos_id=self.tokenizer.eos_id,
                                           attention=o.attention, target_prefix=prefixes, alternatives=o.num_hypotheses)
        if o.method == "greedy":
            hyps = greedy(self.backend, src_ids, src_mask, o.max_len, **common)
        elif o.method == "sample":
            hyps = sample(self.backend, src_ids, src_mask, o.max_len, temperature=o.temperature, top_k=o.top_k,
                          top_p=o.top_p, seed=seed, **common)
        else:
            log_probs = prefix_log_probs(self.backend, src_ids, src_mask, prefixes, self.tokenizer.bos_id)
            _, top = self.backend.top_k(np.ascontiguousarray(log_probs, dtype=np.float32), n)  # likeliest first
            n = top.shape[1]  # fewer when the vocabulary is smaller
            rows = np.repeat(np.arange(src_ids.shape[0]), n)
            forced = [prefixes[r] + [int(token)] for r, token in zip(rows, top.reshape(-1).tolist(), strict=True)]
            hyps = self.search(src_ids[rows], src_mask[rows], o.method, o.beam, o.length_penalty, o.max_len,
                               o.temperature, o.top_k, o.top_p, seed, o.attention, o.patience, forced)
        return [[h for h in hyps[r * n:(r + 1) * n] if h is not None] for r in range(src_ids.shape[0])]

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
