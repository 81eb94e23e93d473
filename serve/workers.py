"""The batch workers: a list of concurrent requests in, one answer per request out, the runtime called once per
group of requests that can share a search. No Ray here: a Serve replica runs one (deployments.py), and the tests and
the in-process backend call it directly.

A group is the requests with the same settings (precision, languages, method, beam, ...): the runtime's batched
search takes one set of settings per call. Sampled requests never share a call: the runtime seeds a call once, so a
seeded request would draw other tokens beside strangers than alone. Every answer says how big its batch was and
how long its group's search took; `stats()` counts the batch sizes seen, which is how the tests see batching
happen inside the deployment.
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

from . import limits

# The runtime's search settings, and what a translation group shares: every field of TranslateRequest but the text
# and truncate.
SEARCH_FIELDS = ("method", "beam", "length_penalty", "patience", "max_len", "temperature", "top_k", "top_p", "seed",
                 "attention")
GROUP_FIELDS = ("precision", "src_lang", "tgt_lang", *SEARCH_FIELDS)


def error(status: int, message: str) -> dict[str, Any]:
    return {"error": message, "status": status}


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
        any_model = next(iter(self.models.values()))
        return {"task": self.task, "model_dir": str(any_model.model_dir), "precisions": list(self.models),
                "provider": any_model.provider, "provider_note": any_model.provider_note,
                "threads": any_model.threads}

    def run(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One answer per request, in order: the result, or {"error": message, "status": HTTP status}."""
        self.count(len(requests))
        answers: list[dict[str, Any] | None] = [None] * len(requests)
        groups: dict[tuple, list[int]] = {}
        for i, request in enumerate(requests):
            problem = self.problem(request)
            if problem:
                answers[i] = error(422, problem)
            else:
                groups.setdefault(self.group_key(i, request), []).append(i)
        for rows in groups.values():
            start = time.perf_counter()
            try:
                results = self.search([requests[i] for i in rows])
            except ValueError as e:  # a limit the checks above missed: still the user's input
                results = [error(422, str(e))] * len(rows)
            except Exception as e:
                results = [error(500, f"{type(e).__name__}: {e}")] * len(rows)
            timings = {"batch_size": len(requests), "group_size": len(rows),
                       "model_ms": (time.perf_counter() - start) * 1000}
            for i, result in zip(rows, results, strict=True):
                answers[i] = result if "error" in result else {**result, "timings": timings}
        return answers  # type: ignore[return-value]

    def problem(self, request: dict[str, Any]) -> str | None:
        raise NotImplementedError

    def group_key(self, i: int, request: dict[str, Any]) -> tuple:
        raise NotImplementedError

    def search(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise NotImplementedError


class TranslationWorker(Worker):
    task = "translate"

    @classmethod
    def load(cls, models_dir: str | Path, provider: str, precisions, threads: int | None) -> TranslationWorker:
        return cls({p: OnnxTranslator(Path(models_dir) / "translate", provider=provider, precision=p, threads=threads)
                    for p in precisions})

    def info(self) -> dict[str, Any]:
        model = next(iter(self.models.values()))
        return {**super().info(), "directions": [list(d) for d in model.directions], "max_src_len": model.max_src_len}

    def problem(self, request: dict[str, Any]) -> str | None:
        return limits.translate_problem(request, self.models)

    def group_key(self, i: int, request: dict[str, Any]) -> tuple:
        alone = i if request["method"] == "sample" else None
        return (*(request[f] for f in GROUP_FIELDS), alone)

    def search(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first = requests[0]
        model = self.models[first["precision"]]
        found = model.translate([r["text"] for r in requests], src_lang=first["src_lang"], tgt_lang=first["tgt_lang"],
                                **{f: first[f] for f in SEARCH_FIELDS})
        return [{"text": t.text, "confidence": t.confidence, "tokens": t.tokens, "token_ids": t.token_ids,
                 "token_probs": t.token_probs, "score": t.score, "src_tokens": t.src_tokens, "truncated": t.truncated,
                 "warning": t.warning, "provider": model.provider, "precision": model.precision,
                 "attention": None if t.attention is None else {k: maps(v) for k, v in t.attention.items()}}
                for t in found]


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

    def problem(self, request: dict[str, Any]) -> str | None:
        return limits.sentiment_problem(request, self.models)

    def group_key(self, i: int, request: dict[str, Any]) -> tuple:
        return request["precision"], request["attention"]

    def search(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first = requests[0]
        model = self.models[first["precision"]]
        found = model.classify([r["text"] for r in requests], attention=first["attention"])
        return [{"label": p.label, "probs": p.probs, "tokens": p.tokens, "truncated": p.truncated,
                 "warning": p.warning, "provider": model.provider, "precision": model.precision,
                 "attention": maps(p.attention)} for p in found]
