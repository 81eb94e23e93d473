"""The batch workers: a list of concurrent requests in, one answer per request out, the runtime called once per
group of requests that can share a search. No Ray here: a Serve replica runs one (deployments.py), and the tests and
the in-process backend call it directly.

A group is the requests with the same settings (precision, languages, method, beam, ...): the runtime's batched
search takes one set of settings per call. Sampled requests never share a call: the runtime seeds a call once, so a
seeded request would draw other tokens beside strangers than alone. Every answer says how big its batch was and
how long its group's search took; `stats()` counts the batch sizes seen, which is how the tests see batching
happen inside the deployment.

One request's failure never fails another's: each is checked alone first (limits.py: a problem of the input is
its own 422), and where a shared search still raises, each of its requests is searched again alone, so only the
one that fails gets the error. Only the checks of the input make a 4xx: a check that crashes or a search that
raises is the service's fault, a 500 whose sentence names an error id the log holds (faults.py). Searches are cut
to at most `CostLimits.search_rows` rows (costs.rows_per_text: the beam, the alternatives and hypotheses counted):
a batch of wide beams or steered requests runs as several bounded searches, and a text's answer does not depend on
how it was cut (the runtime's batched search equals its one-by-one search). Before each search, the requests whose
clients stopped waiting are left out (a lane's batch says which: batcher.Batch), so bounded searches also bound
how long a lane runs work nobody waits for.
"""
from __future__ import annotations

import os
import resource
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from runtime import OnnxSentimentClassifier, OnnxTranslator
from runtime.model_files import read_model_config

from . import costs, limits
from .faults import InputError, internal_error

# The runtime's search settings, and what a translation group shares: every field of TranslateRequest but the text
# and truncate.
SEARCH_FIELDS = ("method", "beam", "length_penalty", "patience", "max_len", "temperature", "top_k", "top_p", "seed",
                 "attention", "num_hypotheses", "return_alternatives", "alignment")
GROUP_FIELDS = ("precision", "src_lang", "tgt_lang", *SEARCH_FIELDS)


def error(status: int, message: str) -> dict[str, Any]:
    return {"error": message, "status": status}


# The answer of a request left out because its client stopped waiting (its 504 already went out): nobody reads it.
DROPPED = error(504, "left out of its search: its client stopped waiting")


def maps(arrays) -> list | None:
    """Attention maps as JSON: each (H, rows, cols) array -> nested lists, rounded to 4 decimals (a map's rows sum
    to 1; the figures draw far coarser)."""
    return None if arrays is None else [np.round(np.asarray(a, dtype=np.float64), 4).tolist() for a in arrays]


def statm_mb(pid: int) -> float:
    """A process' resident memory now, from Linux /proc (OSError where there is none, or it ended)."""
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def rss_mb() -> float:
    """This process' resident memory now (Linux /proc), else its peak."""
    try:
        return statm_mb(os.getpid())
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Worker:
    """What both workers share: the loaded models per precision, the batch-size counts."""

    task = ""

    def __init__(self, models: dict[str, Any]):
        self.models = models
        self.lock = threading.Lock()
        self.batch_sizes: Counter[int] = Counter()  # requests per call of run() -> how many such calls
        self.requests = 0

    def count(self, size: int) -> None:
        with self.lock:
            self.batch_sizes[size] += 1
            self.requests += size

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {"pid": os.getpid(), "rss_mb": rss_mb(), "requests": self.requests,
                    "batch_sizes": {str(k): v for k, v in sorted(self.batch_sizes.items())}}

    def info(self) -> dict[str, Any]:
        """What a client may know: the model's name (its folder's, never the machine's path), precisions,
        provider, threads and the cost limits."""
        any_model = next(iter(self.models.values()))
        return {"task": self.task, "model": Path(any_model.model_dir).name, "precisions": list(self.models),
                "provider": any_model.provider, "provider_note": any_model.provider_note,
                "threads": any_model.threads, "limits": {"max_chars": limits.MAX_CHARS, **costs.LIMITS.as_dict()}}

    def heavy(self, request: dict[str, Any]) -> bool:
        """Whether `request` takes the heavy lane (batcher.Lanes)."""
        raise NotImplementedError

    def run(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One answer per request, in order: the result, or {"error": message, "status": HTTP status}. Where
        `requests` is a lane's batcher.Batch, a search leaves out the requests nobody waits for any more."""
        self.count(len(requests))
        awaited = getattr(requests, "awaited", lambda i: True)
        answers: list[dict[str, Any] | None] = [None] * len(requests)
        groups: dict[tuple, list[int]] = {}
        for i, request in enumerate(requests):
            try:
                self.check(request)
                groups.setdefault(self.group_key(i, request), []).append(i)
            except InputError as e:  # the input's fault: its sentence
                answers[i] = error(422, str(e))
            except Exception as e:  # a check that crashes is the service's fault, still this request's alone
                answers[i] = error(500, internal_error(f"checking a {self.task} request", e))
        for group in groups.values():
            for cut in self.cut(group, requests):
                rows = [i for i in cut if awaited(i)]
                for i in set(cut) - set(rows):
                    answers[i] = DROPPED
                if not rows:
                    continue
                start = time.perf_counter()
                results = self.search_apart([requests[i] for i in rows])
                timings = {"batch_size": len(requests), "group_size": len(rows),
                           "model_ms": (time.perf_counter() - start) * 1000}
                for i, result in zip(rows, results, strict=True):
                    answers[i] = result if "error" in result else {**result, "timings": timings}
        return answers  # type: ignore[return-value]

    def search_apart(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One search for the group; if it raises, each request searched alone, so the error is only the
        failing request's. The input was checked before: whatever a search raises is the service's fault (500)."""
        try:
            return self.search(requests)
        except Exception as e:
            if len(requests) > 1:
                return [answer for request in requests for answer in self.search_apart([request])]
            return [error(500, internal_error(f"running a {self.task} search", e))]

    def cut(self, rows: list[int], requests: list[dict[str, Any]]) -> list[list[int]]:
        """A group's rows as searches of at most CostLimits.search_rows rows each (a group's requests share
        their settings, so each takes as many rows as its first)."""
        per_search = costs.texts_per_search(self.rows_per_text(requests[rows[0]]))
        return [rows[i:i + per_search] for i in range(0, len(rows), per_search)]

    def rows_per_text(self, request: dict[str, Any]) -> int:
        return 1

    def check(self, request: dict[str, Any]) -> None:
        """Raise faults.InputError for a request the model cannot take (limits.py)."""
        raise NotImplementedError

    def group_key(self, i: int, request: dict[str, Any]) -> tuple:
        raise NotImplementedError

    def search(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise NotImplementedError


class TranslationWorker(Worker):
    task = "translate"

    def __init__(self, models: dict[str, Any], size: costs.TranslatorSize | None = None):
        super().__init__(models)
        self.size = size or costs.TranslatorSize.from_config(
            read_model_config(next(iter(models.values())).model_dir)["config"])

    @classmethod
    def load(cls, models_dir: str | Path, provider: str, precisions, threads: int | None) -> TranslationWorker:
        return cls({p: OnnxTranslator(Path(models_dir) / "translate", provider=provider, precision=p, threads=threads)
                    for p in precisions})

    def heavy(self, request: dict[str, Any]) -> bool:
        return costs.is_heavy_translation(request)

    def rows_per_text(self, request: dict[str, Any]) -> int:
        return costs.rows_per_text(request)

    def info(self) -> dict[str, Any]:
        model = next(iter(self.models.values()))
        return {**super().info(), "directions": [list(d) for d in model.directions], "max_src_len": model.max_src_len}

    def check(self, request: dict[str, Any]) -> None:
        limits.check_translation(request, self.models, self.size)

    def group_key(self, i: int, request: dict[str, Any]) -> tuple:
        alone = i if request["method"] == "sample" else None
        return (*(request[f] for f in GROUP_FIELDS), alone)

    def search(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first = requests[0]
        model = self.models[first["precision"]]
        steered = first["return_alternatives"] or any(r["target_prefix"] for r in requests)
        n_best_lists = model.translate_n_best(
            [r["text"] for r in requests], src_lang=first["src_lang"], tgt_lang=first["tgt_lang"],
            target_prefix=[limits.prefix_of(r) for r in requests] if steered else None,
            **{f: first[f] for f in SEARCH_FIELDS})
        return [answer_of(list_, model, several=first["num_hypotheses"] > 1 or first["return_alternatives"])
                for list_ in n_best_lists]


def translation_json(t) -> dict[str, Any]:
    """One runtime Translation's own fields as JSON."""
    return {"text": t.text, "confidence": t.confidence, "tokens": t.tokens, "token_ids": t.token_ids,
            "token_probs": t.token_probs, "score": t.score, "prefix_len": t.prefix_len}


def answer_of(translations: list, model: Any, several: bool) -> dict[str, Any]:
    """A request's answer: its first translation's fields (as before steering), with `hypotheses` (every one of
    the n best or alternatives, first included) when it asked for several, and `alignment` when it asked."""
    t = translations[0]
    answer = {**translation_json(t), "src_tokens": t.src_tokens, "truncated": t.truncated, "warning": t.warning,
              "provider": model.provider, "precision": model.precision,
              "attention": None if t.attention is None else {k: maps(v) for k, v in t.attention.items()}}
    if several:
        answer["hypotheses"] = [translation_json(h) for h in translations]
    if t.alignment is not None:
        a = t.alignment
        answer["alignment"] = {"source_words": a.source_words, "target_words": a.target_words, "links": a.links,
                               "weights": np.round(np.asarray(a.weights, dtype=np.float64), 4).tolist()}
    return answer


class SentimentWorker(Worker):
    task = "sentiment"

    @classmethod
    def load(cls, models_dir: str | Path, provider: str, precisions, threads: int | None) -> SentimentWorker:
        return cls({p: OnnxSentimentClassifier(Path(models_dir) / "sentiment", provider=provider, precision=p,
                                               threads=threads) for p in precisions})

    def info(self) -> dict[str, Any]:
        model = next(iter(self.models.values()))
        return {**super().info(), "labels": model.labels, "max_len": model.max_len,
                "temperature": model.files.config.get("temperature")}

    def heavy(self, request: dict[str, Any]) -> bool:
        return costs.is_heavy_classification(request)

    def check(self, request: dict[str, Any]) -> None:
        limits.check_sentiment(request, self.models)

    def group_key(self, i: int, request: dict[str, Any]) -> tuple:
        return request["precision"], request["attention"]

    def search(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first = requests[0]
        model = self.models[first["precision"]]
        predictions = model.classify([r["text"] for r in requests], attention=first["attention"])
        return [{"label": p.label, "probs": p.probs, "tokens": p.tokens, "truncated": p.truncated,
                 "warning": p.warning, "provider": model.provider, "precision": model.precision,
                 "attention": maps(p.attention)} for p in predictions]
