"""The API's backend without Ray: the workers in this process, one request per call (no batching). The tests of
the API's validation use it, and so can anyone who wants the HTTP API on one process."""
from __future__ import annotations

import asyncio
from typing import Any

from .settings import ServeSettings
from .workers import SentimentWorker, TranslationWorker, Worker


class InProcessBackend:
    def __init__(self, workers: dict[str, Worker]):
        self.workers = workers

    @classmethod
    def load(cls, settings: ServeSettings) -> InProcessBackend:
        args = (settings.models_dir, settings.provider, settings.precisions, settings.threads)
        return cls({"translate": TranslationWorker.load(*args), "sentiment": SentimentWorker.load(*args)})

    async def call(self, task: str, method: str, *args: Any) -> Any:
        worker = self.workers[task]
        if method == task:
            [found] = await asyncio.to_thread(worker.run, list(args))
            return found
        return getattr(worker, method)()
