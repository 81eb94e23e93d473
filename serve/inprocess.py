"""The API's backend without Ray: the workers in this process, behind the same lanes (batching in threads) as a
replica. The tests of the API's validation and isolation use it, and so can anyone who wants the HTTP API on one
process."""
from __future__ import annotations

from typing import Any

from .batcher import Lanes
from .encoding import encoded
from .settings import ServeSettings
from .workers import SentimentWorker, TranslationWorker, Worker


class InProcessBackend:
    def __init__(self, workers: dict[str, Worker], settings: ServeSettings | None = None):
        s = settings or ServeSettings()
        self.workers = workers
        self.lanes = {task: Lanes(encoded(worker.run), worker.heavy, s.max_batch_size, s.batch_wait_timeout_s,
                                  name=task) for task, worker in workers.items()}

    @classmethod
    def load(cls, settings: ServeSettings) -> InProcessBackend:
        args = (settings.models_dir, settings.provider, settings.precisions, settings.threads)
        return cls({"translate": TranslationWorker.load(*args), "sentiment": SentimentWorker.load(*args)}, settings)

    async def call(self, task: str, method: str, *args: Any) -> Any:
        if method == task:
            return await self.lanes[task].submit(*args)
        if method == "stats":
            return self.workers[task].stats() | self.lanes[task].load()
        return getattr(self.workers[task], method)()
