"""Whether one request can be served by the loaded runtime model, with the runtime's own limits and messages.

The worker checks every request alone before it joins a batch: the runtime raises for a whole call when one text
in it is bad, and one user's empty line must not fail fifteen other users' requests. A problem a check finds is
that request's own (`check_translation`, `check_sentiment` raise faults.InputError: a 422 with its sentence), never
the batch's: a lone surrogate that reached the tokenizer would raise a TypeError for every request beside it;
text_problem names it. A check that crashes is the service's fault, not the input's
(workers.Worker.run: a 500 with an error id), and still fails only its own request. The messages are the
runtime's (tests/serve/test_serve_api.py compares them with what `OnnxTranslator.translate` raises); over-long
text, which the runtime cuts and flags, is refused here unless the request says truncate=true.
"""
from __future__ import annotations

from typing import Any

from runtime.spec import PRECISIONS
from runtime.text import check_steering, check_texts

from .costs import TranslatorSize, translate_cost_problem
from .faults import InputError
from .schemas import MAX_CHARS  # read before tokenizing: a longer text is refused without spending the tokenizer on it


def text_problem(text: str) -> str | None:
    if not isinstance(text, str):
        return f"text must be a string, got {type(text).__name__}"
    if len(text) > MAX_CHARS:
        return f"text too long: {len(text)} characters, the service takes at most {MAX_CHARS} per request"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:  # JSON can carry "\ud800"; no tokenizer can read it
        return (f"text is not valid Unicode: a lone surrogate U+{ord(text[e.start]):04X} at character {e.start} "
                "(half of a UTF-16 pair); send the whole character, or remove it")
    try:
        check_texts([text])
    except ValueError as e:
        return str(e)
    return None



def precision_problem(precision: str, loaded: dict[str, Any]) -> str | None:
    if precision not in PRECISIONS:
        return f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}"
    if precision not in loaded:
        return f"precision {precision!r} is not loaded by this service: choose one of {', '.join(loaded)}"
    return None


def length_problem(tokens: int, room: int, why: str, verb: str) -> str:
    return (f"text too long: {tokens} tokens, this model reads at most {room} ({why}); split it, or send "
            f"truncate=true to {verb} its first {room} tokens")


def translate_problem(request: dict[str, Any], loaded: dict[str, Any], size: TranslatorSize) -> str | None:
    """The first reason `request` cannot be translated by `loaded` (precision -> OnnxTranslator of `size`): bad
    text, settings, length or a cost limit (costs.py); or None."""
    problem = text_problem(request["text"]) or precision_problem(request["precision"], loaded)
    if problem:
        return problem
    model = loaded[request["precision"]]
    try:
        model.check_settings(request["src_lang"], request["tgt_lang"], request["method"], request["attention"])
    except ValueError as e:
        return str(e)
    tokens = len(model.tokenizer.encode(request["text"]))
    if tokens > model.source_room and not request["truncate"]:
        return length_problem(tokens, model.source_room,
                              f"its max_src_len {model.max_src_len} less the language tag and </s>", "translate")
    src_tokens = min(tokens, model.source_room) + 2
    return steering_problem(request, model, src_tokens) or translate_cost_problem(request, src_tokens, size)


def check_translation(request: dict[str, Any], loaded: dict[str, Any], size: TranslatorSize) -> None:
    """Raise InputError with the first reason `request` cannot be translated (translate_problem)."""
    problem = translate_problem(request, loaded, size)
    if problem:
        raise InputError(problem)


def prefix_of(request: dict[str, Any]) -> str | None:
    """The request's target prefix for the runtime: alternatives without one are taken at the first position."""
    prefix = request.get("target_prefix")
    return "" if prefix is None and request.get("return_alternatives") else prefix


def steering_problem(request: dict[str, Any], model: Any, src_tokens: int) -> str | None:
    """target_prefix, num_hypotheses, return_alternatives checked as the runtime checks them (its sentences)."""
    prefix = prefix_of(request)
    if prefix:
        problem = text_problem(prefix)
        if problem:
            return "target_prefix: " + problem
    try:
        check_steering(1, request["method"], request["beam"], request["num_hypotheses"],
                       request["return_alternatives"], None if prefix is None else [prefix])
        if prefix:
            limit = model.target_limit(src_tokens, request["max_len"])
            model.check_room(0, len(model.prefix_ids(prefix)), limit, request["return_alternatives"])
    except ValueError as e:
        return str(e).replace("text #0", "this text")
    return None


def sentiment_problem(request: dict[str, Any], loaded: dict[str, Any]) -> str | None:
    """The first reason `request` cannot be classified by `loaded` (precision -> OnnxSentimentClassifier), or None."""
    problem = text_problem(request["text"]) or precision_problem(request["precision"], loaded)
    if problem:
        return problem
    model = loaded[request["precision"]]
    tokens = len(model.tokenizer.encode(request["text"]))
    if tokens > model.max_len and not request["truncate"]:
        return length_problem(tokens, model.max_len, "its max_len", "classify")
    return None


def check_sentiment(request: dict[str, Any], loaded: dict[str, Any]) -> None:
    """Raise InputError with the first reason `request` cannot be classified (sentiment_problem)."""
    problem = sentiment_problem(request, loaded)
    if problem:
        raise InputError(problem)
