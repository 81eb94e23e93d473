"""The service's HTTP API behind the runtime's own interface: `ServedTranslator.translate` and
`ServedClassifier.classify` take the arguments of `OnnxTranslator.translate` / `OnnxSentimentClassifier.classify`
and return the same `Translation` / `Prediction` objects, so the pages' result code runs unchanged on either.

Several texts go out as concurrent requests, one text each: the service batches them (that is what it is for).
Over-long texts are sent with truncate=true, so they come back cut and flagged as the runtime does in-process.
Failures: the service's 4xx sentences become ValueError (what the pages show as a warning, as for local input
errors); an unreachable service, an overload (503) or a timeout (504) become ServiceError, naming the URL.
Standard library only (urllib): the app needs no HTTP client package.
"""
from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from runtime.alignment import DEFAULT_HEADS, WordAlignment
from runtime.text import Prediction, Translation, check_steering, check_texts

SERVE_ENV = "TX_SERVE_URL"
TIMEOUT_S = 120.0  # the service answers 504 itself after its own request_timeout_s (30 s by default)
PARALLEL = 16  # requests in flight per call: one batch's worth for the service's default max_batch_size


# The service's own errors are JSON ({"detail": ...}). Its HTTP front (HAProxy) drops the connection, or answers a
# plain-text 500, when the replica answering a request stops under it (docs/serving.md#faults).
LOST = ("the service at {url} {how}: the replica answering this request most likely stopped under it, and Serve "
        "starts a new one within seconds; try again")


class ServiceError(RuntimeError):
    """The service could not answer (unreachable, overloaded, timed out, failed)."""


def service_url() -> str | None:
    """TX_SERVE_URL without its trailing slash, or None when unset (the pages then load models themselves)."""
    return os.environ.get(SERVE_ENV, "").strip().rstrip("/") or None


def detail_of(body: bytes) -> str:
    """The service's sentence ({"detail": "..."}), or FastAPI's field errors as "field: message" lines."""
    try:
        detail = json.loads(body or b"{}").get("detail", "")
    except (ValueError, AttributeError):
        return body.decode("utf-8", "replace")[:300]
    if isinstance(detail, list):  # FastAPI's validation errors: [{"loc": [...], "msg": ...}, ...]
        return "; ".join(f"{'.'.join(str(p) for p in item.get('loc', [])[1:])}: {item.get('msg')}" for item in detail)
    return str(detail)


class Service:
    """One service URL: JSON in and out, its errors as ValueError (4xx) or ServiceError."""

    def __init__(self, url: str, timeout_s: float = TIMEOUT_S):
        self.url, self.timeout_s = url.rstrip("/"), timeout_s

    def request(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}", data, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            body = e.read()
            detail = detail_of(body)
            if 400 <= e.code < 500 and e.code != 408:
                raise ValueError(detail) from None
            if e.code in (500, 502) and not body.lstrip().startswith(b"{"):
                raise ServiceError(LOST.format(url=self.url, how=f"answered {e.code} {detail!r}")) from None
            raise ServiceError(f"the service at {self.url} answered {e.code}: {detail}") from None
        except (http.client.RemoteDisconnected, ConnectionResetError):
            raise ServiceError(LOST.format(url=self.url, how="closed the connection without an answer")) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise ServiceError(f"the service at {self.url} cannot be reached ({reason}): start it with `make serve`, "
                               f"or unset {SERVE_ENV} to run the models in this app") from None

    def info(self) -> dict[str, Any]:
        return self.request("/info")

    def each(self, path: str, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One request per body, up to PARALLEL at once; answers in order (the first failure is raised)."""
        if len(bodies) == 1:
            return [self.request(path, bodies[0])]
        with ThreadPoolExecutor(min(PARALLEL, len(bodies))) as pool:
            return list(pool.map(lambda body: self.request(path, body), bodies))


def arrays(maps: list | None) -> list[np.ndarray] | None:
    return None if maps is None else [np.asarray(m, dtype=np.float32) for m in maps]


class Served:
    """What the pages read off a model besides its calls: provider (the one that ran on the service, and where),
    provider_note, precision."""

    def __init__(self, service: Service, precision: str, info: dict[str, Any]):
        self.service, self.precision, self.info = service, precision, info
        self.provider = f"{info.get('provider', '?')}, served by {service.url}"
        self.provider_note = info.get("provider_note")
        self.model_dir = service.url
        self.last_timings: list[dict[str, Any]] = []  # the service's timings of the last call, per text


class ServedTranslator(Served):
    def __init__(self, service: Service, precision: str, info: dict[str, Any]):
        super().__init__(service, precision, info)
        self.max_src_len = int(info["max_src_len"])
        self.directions = [tuple(d) for d in info["directions"]]

    def translate(self, texts: Sequence[str], src_lang: str = "de", tgt_lang: str = "en", method: str = "beam",
                  beam: int = 4, length_penalty: float = 0.6, max_len: int | None = None, temperature: float = 1.0,
                  top_k: int = 0, top_p: float = 1.0, seed: int | None = None, attention: str = "none",
                  patience: float | None = None) -> list[Translation]:
        return [found[0] for found in self.translate_n_best(
            texts, src_lang, tgt_lang, method, beam, length_penalty, max_len, temperature, top_k, top_p, seed,
            attention, patience)]

    def translate_n_best(self, texts: Sequence[str], src_lang: str = "de", tgt_lang: str = "en",
                         method: str = "beam", beam: int = 4, length_penalty: float = 0.6, max_len: int | None = None,
                         temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, seed: int | None = None,
                         attention: str = "none", patience: float | None = None,
                         target_prefix: Sequence[str | None] | None = None, num_hypotheses: int = 1,
                         return_alternatives: bool = False, alignment: bool = False) -> list[list[Translation]]:
        """OnnxTranslator.translate_n_best over POST /translate (the steering fields by the same names). The
        service sends attention and alignment for each text's first translation only: the others have neither."""
        check_texts(texts)
        check_steering(len(texts), method, beam, num_hypotheses, return_alternatives, target_prefix)
        common = {"src_lang": src_lang, "tgt_lang": tgt_lang, "method": method, "beam": beam,
                  "length_penalty": length_penalty, "max_len": max_len, "temperature": temperature, "top_k": top_k,
                  "top_p": top_p, "seed": seed, "attention": attention, "patience": patience,
                  "precision": self.precision, "truncate": True, "num_hypotheses": num_hypotheses,
                  "return_alternatives": return_alternatives, "alignment": alignment}
        prefixes = list(target_prefix) if target_prefix is not None else [None] * len(texts)
        found = self.service.each("/translate", [{"text": text, **common, "target_prefix": prefix}
                                                 for text, prefix in zip(texts, prefixes, strict=True)])
        self.last_timings = [f.get("timings", {}) for f in found]
        return [translations_of(f) for f in found]


def translation_of(f: dict[str, Any], answer: dict[str, Any]) -> Translation:
    """One translation of an answer (`f`: the answer itself or one of its `hypotheses`); the source's fields come
    from the answer."""
    return Translation(text=f["text"], tokens=f["tokens"], token_ids=f["token_ids"], score=f["score"],
                       src_tokens=answer["src_tokens"], truncated=answer["truncated"], warning=answer["warning"],
                       token_probs=f["token_probs"], confidence=f["confidence"], prefix_len=f.get("prefix_len", 0))


def translations_of(answer: dict[str, Any]) -> list[Translation]:
    """An answer's translations: its `hypotheses` (n best or alternatives) when it has them, else the answer; the
    first gets the answer's attention and alignment."""
    found = [translation_of(h, answer) for h in answer.get("hypotheses") or [answer]]
    first = found[0]
    if answer.get("attention") is not None:
        first.attention = {kind: arrays(m) for kind, m in answer["attention"].items()}
    if answer.get("alignment") is not None:
        a = answer["alignment"]
        first.alignment = WordAlignment(a["source_words"], a["target_words"], [list(x) for x in a["links"]],
                                        np.asarray(a["weights"], dtype=np.float32), DEFAULT_HEADS)
    return found


class ServedClassifier(Served):
    def __init__(self, service: Service, precision: str, info: dict[str, Any]):
        super().__init__(service, precision, info)
        self.max_len = int(info["max_len"])
        self.labels = list(info["labels"])

    def classify(self, texts: Sequence[str], attention: bool = False) -> list[Prediction]:
        check_texts(texts)
        bodies = [{"text": text, "precision": self.precision, "attention": attention, "truncate": True}
                  for text in texts]
        found = self.service.each("/sentiment", bodies)
        self.last_timings = [f.get("timings", {}) for f in found]
        return [Prediction(label=f["label"], probs=f["probs"], tokens=f["tokens"], truncated=f["truncated"],
                           warning=f["warning"], attention=arrays(f["attention"])) for f in found]


def served_model(task: str, url: str, precision: str, info: dict[str, Any] | None = None) -> Served:
    """The task's model on the service at `url` (info: its GET /info, fetched when not given)."""
    service = Service(url)
    info = info if info is not None else service.info()
    cls = ServedTranslator if task == "translate" else ServedClassifier
    return cls(service, precision, info[task])
