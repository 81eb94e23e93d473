"""What one request may cost the service, and which lane it takes: limits a client cannot exceed.

Without limits, four sampled requests with temperature 10, max_len 512 and attention="all" on a 100-token text
froze the replica for 32 s and answered 13.9 MB of JSON each (measured: docs/serving.md). The limits bound each
kind of work by the source it serves, so a request's cost follows its text:

- target length: max_len at most `max_len_per_source` × the source's tokens + `max_len_extra` (the runtime's own
  default, source + 50, always fits), and never past the model's positional table;
- search work: rows × target length at most `beam_steps` row-steps (rows: the beam, times the alternatives
  with return_alternatives; one per hypothesis or alternative for greedy and sampling); a batch's searches are
  cut to at most `search_rows` rows each (workers.py), so a batch of wide beams runs as several bounded searches;
- attention="all": the answer's attention values (encoder S², decoder self T² and cross T × S, per layer and
  head, T the longest target asked for) at most `attention_values` (about 7 bytes of JSON each);
- sampling: one search per request (a seeded draw must not depend on strangers), its length bounded as above,
  run in the heavy lane.

A request over a limit gets 422 with a sentence naming the limit and what would fit; GET /info lists the limits.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

DEFAULT_EXTRA_LEN = 50  # the runtime's max_len=None: source length + 50 (runtime.decoding.hypothesis)


@dataclass(frozen=True)
class CostLimits:
    max_len_per_source: int = 2  # max_len at most this × the source's tokens (language tag and </s> included) ...
    max_len_extra: int = 50  # ... plus this: a 10-token source may ask for 70 target tokens, a 100-token one 250
    beam_steps: int = 4096  # beam × target length (row-steps): beam 16 over 256 tokens, beam 4 over 1,024
    search_rows: int = 64  # the most rows (beam × texts) one search of a batch runs: 16 greedy texts, 4 of beam 16
    attention_values: int = 1_500_000  # numbers in one attention="all" answer (~10 MB of JSON at most)
    # Which requests take the heavy lane (batcher.Lanes): sampling (one search each), attention="all" (a second
    # pass and a big answer), and beam work over this many row-steps; the rest share the light lane's batches.
    heavy_steps: int = 1024

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


LIMITS = CostLimits()


def target_len(request: dict[str, Any], src_tokens: int, max_target_len: int | None) -> int:
    """The most target tokens the search may generate for this request (the runtime's rule)."""
    asked = request["max_len"] if request["max_len"] is not None else src_tokens + DEFAULT_EXTRA_LEN
    return min(asked, max_target_len) if max_target_len else asked


def attention_values(size: TranslatorSize, src: int, tgt: int) -> int:
    """How many numbers attention="all" answers: encoder L_e × H × S², decoder L_d × H × (T² + T × S)."""
    return size.heads * (size.encoder_layers * src * src + size.decoder_layers * (tgt * tgt + tgt * src))


@dataclass(frozen=True)
class TranslatorSize:
    """What the limits need of a translator: its layers and heads (attention's size), its positional table."""
    encoder_layers: int
    decoder_layers: int
    heads: int
    max_target_len: int | None

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> TranslatorSize:
        """From config.json's "config" (tx's model config)."""
        layers = int(config["n_layers"])
        return cls(layers, int(config.get("n_decoder_layers") or layers), int(config["n_heads"]),
                   int(config.get("max_len", 256)))


def translate_cost_problem(request: dict[str, Any], src_tokens: int, size: TranslatorSize,
                           limits: CostLimits | None = None) -> str | None:
    """The first limit `request` (a TranslateRequest as a dict) exceeds with `src_tokens` source tokens (language
    tag and </s> included) on a translator of `size`, as the sentence the client gets; None when it fits. `limits`:
    LIMITS as it is when called."""
    limits = limits or LIMITS
    cap = limits.max_len_per_source * src_tokens + limits.max_len_extra
    if request["max_len"] is not None and request["max_len"] > cap:
        return (f"max_len {request['max_len']} is over this service's limit for this text: at most "
                f"{limits.max_len_per_source} × its {src_tokens} source tokens + {limits.max_len_extra} = {cap} "
                "(GET /info lists the limits)")
    tgt = target_len(request, src_tokens, size.max_target_len)
    rows = rows_per_text(request)
    if rows * tgt > limits.beam_steps:
        what = f"beam {request['beam']}" if request["method"] == "beam" else f"{rows} {request['method']} rows"
        if request["method"] == "beam" and rows > request["beam"]:
            what = f"beam {request['beam']} × {rows // request['beam']} alternatives"
        return (f"{what} × {tgt} target tokens is {rows * tgt} row-steps, over this service's limit of "
                f"{limits.beam_steps}: ask for a narrower beam, fewer hypotheses or a lower max_len")
    if request["attention"] == "all":
        values = attention_values(size, src_tokens, tgt)
        if values > limits.attention_values:
            return (f"attention='all' for {src_tokens} source and up to {tgt} target tokens is {values:,} numbers, "
                    f"over this service's limit of {limits.attention_values:,}: ask for a lower max_len, "
                    "attention='cross', or a shorter text")
    return None


def rows_per_text(request: dict[str, Any]) -> int:
    """The rows one text takes in a search: beam's width (times the alternatives, each a beam of its own); greedy
    and sampling one row per hypothesis or alternative. The one count of a translation's rows: the cost limits, the
    lanes (is_heavy_translation) and the cut of a batch into searches of at most `search_rows` (texts_per_search)
    all read it."""
    n, method = request.get("num_hypotheses", 1), request.get("method")
    if method == "beam":
        return request.get("beam", 4) * (n if request.get("return_alternatives") else 1)
    return n if (request.get("return_alternatives") or method == "sample") else 1


def texts_per_search(rows: int, limits: CostLimits | None = None) -> int:
    """How many texts of `rows` rows each (rows_per_text) one search of a batch takes: at most `search_rows` rows
    in all, and at least one text (a text is never split; its own rows are bounded by `beam_steps`)."""
    return max(1, (limits or LIMITS).search_rows // max(1, rows))


def is_heavy_translation(request: dict[str, Any], limits: CostLimits | None = None) -> bool:
    """Whether a translate request takes the heavy lane. Read from the fields alone (no tokenizing on the event
    loop): a third of the text's characters stands in for its tokens (the shipped tokenizers average 4-5
    characters per token on everyday text, so this errs towards the heavy lane)."""
    limits = limits or LIMITS
    if request.get("method") == "sample" or request.get("attention") == "all":
        return True
    steps = request.get("max_len") or len(request.get("text", "")) // 3 + DEFAULT_EXTRA_LEN
    return rows_per_text(request) * steps > limits.heavy_steps


def is_heavy_classification(request: dict[str, Any]) -> bool:
    """Sentiment with attention answers L × (H, S, S) maps: the heavy lane; a label alone is light."""
    return bool(request.get("attention"))
