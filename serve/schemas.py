"""The JSON bodies the service takes, with their types and ranges (FastAPI answers 422 for a wrong type or a number
out of range, naming the field). What depends on the model (languages, length in tokens, loaded precisions) is
checked against the loaded runtime model itself: limits.py; what a request may cost: costs.py. NaN and infinity
are refused in every number (allow_inf_nan=False): JSON has neither, Python's parser accepts both.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

EXAMPLE_GERMAN = "Wo ist der Bahnhof?"
# A text's most characters, checked by the schema before anything else reads it (limits.py checks it again for the
# workers' other callers); the API's body cap (api.MAX_BODY_BYTES) is this many characters as JSON escapes.
MAX_CHARS = 20_000


class TranslateRequest(BaseModel):
    """One text to translate; concurrent requests are batched inside the service, so send lines in parallel."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, json_schema_extra={"examples": [
        {"text": EXAMPLE_GERMAN, "src_lang": "de", "tgt_lang": "en", "method": "greedy", "precision": "int8"}]})

    text: str = Field(max_length=MAX_CHARS, description="the source text (one sentence or a short paragraph)")
    src_lang: str = "de"
    tgt_lang: str = "en"
    method: str = Field("beam", description="beam, greedy or sample (runtime.METHODS)")
    beam: int = Field(4, ge=1, le=16, description="beam size (beam search only)")
    length_penalty: float = Field(0.6, ge=0.0, le=5.0, description="GNMT α: score = log P / ((5 + len) / 6) ** α")
    patience: float | None = Field(None, gt=0.0, le=10.0,
                                   description="None: exact beam stopping; a number: CTranslate2's rule")
    max_len: int | None = Field(None, ge=1, le=512, description="most target tokens; None: source length + 50")
    temperature: float = Field(1.0, gt=0.0, le=10.0)
    top_k: int = Field(0, ge=0, le=1000)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    seed: int | None = Field(None, ge=0, le=2**31 - 1)
    precision: str = Field("fp32", description="fp32 or int8 (those the service loaded: GET /info)")
    attention: str = Field("none", description="none, cross (recorded by the search) or all (runtime.ATTENTION)")
    truncate: bool = Field(False, description="translate the beginning of an over-long text instead of a 422")
    # Steering, by CTranslate2's names (docs/steering.md)
    target_prefix: str | None = Field(None, max_length=2000, description=(
        "the translation starts with these target-language words (forced), then the method goes on"))
    num_hypotheses: int = Field(1, ge=1, le=16, description=(
        "beam: the n best (n <= beam); sample: n draws; with return_alternatives: how many alternatives"))
    return_alternatives: bool = Field(False, description=(
        "the num_hypotheses likeliest tokens after target_prefix (none: the first position), each completed"))
    alignment: bool = Field(False, description="for each target word, the source word it aligns to (cross-attention)")


class SentimentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, json_schema_extra={"examples": [
        {"text": "a gem of a film, warm and funny", "precision": "int8"}]})

    text: str = Field(max_length=MAX_CHARS, description="the review")
    precision: str = "fp32"
    attention: bool = Field(False, description="also return the encoder's self-attention per layer (H, S, S)")
    truncate: bool = Field(False, description="classify the beginning of an over-long text instead of a 422")
