"""Every knob of the service in one dataclass: what `python -m serve` flags, the Serve config file's `args` and
the tests set. Defaults are the ones measured on the 2-core machine (docs/serving.md#choosing-the-batch)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from runtime.spec import PRECISIONS

LAYOUTS = ("one", "split")


@dataclass
class ServeSettings:
    models_dir: str = "models"  # holds translate/ and sentiment/, each exported (`python -m export DIR`)
    provider: str = "auto"  # onnxruntime provider asked for; every answer says which one really ran
    precisions: tuple[str, ...] = PRECISIONS  # loaded at start (a request for another gets a 4xx)
    threads: int | None = None  # onnxruntime intra-op threads per replica (None: onnxruntime's default)
    # "one": one deployment is the HTTP ingress and holds both models (the fastest on one machine, measured:
    # docs/serving.md#two-layouts); "split": an ingress and a deployment per model, each scaled on its own.
    layout: str = "one"
    replicas: int = 1  # "one": replicas of that deployment
    translate_replicas: int = 1  # "split": replicas of each deployment
    sentiment_replicas: int = 1
    ingress_replicas: int = 1
    # Batching (measured: docs/serving.md#choosing-the-batch): 16 is where the runtime's batched greedy stops gaining
    # per sentence on 2 cores. The first request of a batch waits 5 ms for company: at 16 concurrent clients that
    # fills batches (15.9 on average), and a lone client pays 5 ms (10 ms cost it a third of its rate).
    max_batch_size: int = 16
    batch_wait_timeout_s: float = 0.005
    # Back-pressure: a replica takes up to max_ongoing_requests at once (two batches' worth, so the next batch
    # gathers while one runs); beyond that each caller queues up to max_queued_requests, then answers 503.
    max_ongoing_requests: int = 32
    max_queued_requests: int = 64
    # The ingress' own limits bound what waits before the models: with 256 + 256 (and before, no limit) most of a
    # burst of 1,000 waited there until Serve's 35 s backstop (408) instead of a 503 at once (docs/serving.md#faults).
    ingress_max_ongoing_requests: int = 128
    ingress_max_queued_requests: int = 64
    request_timeout_s: float = 30.0  # a request not answered by then gets 504 (the ingress stops waiting for it)
    host: str = "127.0.0.1"
    port: int = 8000
    # False: nothing the service opens listens beyond loopback (API, HAProxy's stats and metrics, Ray's agents and
    # exporters). True (`--expose`, for a cluster or clients on other machines): the API on `host` (0.0.0.0 unless
    # given), Ray on the machine's address, HAProxy's Prometheus exporter on every interface; clients other than
    # 127.0.0.1 get the per-client connection cap (docs/serving.md#the-front-slow-clients-errors-ports).
    expose: bool = False

    def __post_init__(self):
        self.precisions = tuple(self.precisions)
        unknown = [p for p in self.precisions if p not in PRECISIONS]
        if unknown or not self.precisions:
            raise ValueError(f"precisions must be some of {', '.join(PRECISIONS)}, got {list(self.precisions)}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {self.layout!r}")
        for name in ("replicas", "translate_replicas", "sentiment_replicas", "ingress_replicas", "max_batch_size",
                     "max_ongoing_requests", "ingress_max_ongoing_requests"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("max_queued_requests", "ingress_max_queued_requests"):
            if getattr(self, name) < -1 or getattr(self, name) == 0:
                raise ValueError(f"{name} must be -1 (no limit) or positive, got {getattr(self, name)}")
        if self.max_ongoing_requests < self.max_batch_size:
            raise ValueError(f"max_ongoing_requests ({self.max_ongoing_requests}) below max_batch_size "
                             f"({self.max_batch_size}) would keep every batch smaller than asked")
        if self.batch_wait_timeout_s < 0 or self.request_timeout_s <= 0:
            raise ValueError("batch_wait_timeout_s must be >= 0 and request_timeout_s > 0")

    @classmethod
    def ongoing_for(cls, max_batch_size: int) -> int:
        """max_ongoing_requests for a batch size: the default, or two batches where that is more."""
        return max(cls.max_ongoing_requests, 2 * max_batch_size)

    @classmethod
    def from_dict(cls, args: dict[str, Any]) -> ServeSettings:
        """From a Serve config file's `args` (or JSON): unknown keys are an error naming the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(args) - known)
        if unknown:
            raise ValueError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**args)

    def to_dict(self) -> dict[str, Any]:
        settings_dict = asdict(self)
        settings_dict["precisions"] = list(self.precisions)
        return settings_dict
