"""Request batching off the event loop: concurrent requests in, one call of a worker per batch, in a thread.

Why not `@serve.batch`: its handler runs on the replica's event loop. Run there, a search blocks the loop, so
/health, /ready and the timeout's timer wait for it (a heavy request froze the replica for 32 s, its 504 came when
its search ended). Moved into a thread, `@serve.batch` forms the next batch 5 ms after the
first request while the search still runs and queues it behind its semaphore: batches of 1.5 (measured,
docs/serving.md#choosing-the-batch). Here a batch is formed only when the lane is free: the requests that arrived
during a search are all waiting, and the next batch takes up to `max_batch_size` of them at once.

A `Lane` runs one batch at a time in its own thread. The service gives each model two lanes (`Lanes`): light
requests (the many short greedy and beam searches) and heavy ones (sampling, attention="all", long work), so a
heavy request delays only the heavy requests queued behind it; a light one waits at most for the light batch
in progress. A request whose client stopped waiting (its timeout fired, the connection closed) is dropped from
the queue before its batch runs, and from its batch before its search runs (`Batch`: the worker asks before each
search, and cuts a batch into searches of bounded rows), so a lane stops working for clients that left.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from .faults import internal_error

Run = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


class Batch(list):
    """A lane's batch as the worker gets it: the requests (a list), and whether each one's client still waits."""

    def __init__(self, requests: list[dict[str, Any]], futures: list[asyncio.Future]):
        super().__init__(requests)
        self.futures = futures

    def awaited(self, i: int) -> bool:
        """Whether request i's answer is still awaited. Read from the lane's thread while the loop may settle the
        future: an answer a moment stale costs at most one search more."""
        return not self.futures[i].done()


class Lane:
    """One queue and one batch at a time, run in a worker thread."""

    def __init__(self, run: Run, max_batch_size: int, wait_s: float, name: str = ""):
        self.run, self.max_batch_size, self.wait_s, self.name = run, max_batch_size, wait_s, name
        self.queue: asyncio.Queue[tuple[dict[str, Any], asyncio.Future]] | None = None
        self.task: asyncio.Task | None = None
        self.running = 0  # requests in the batch now running

    @property
    def waiting(self) -> int:
        return 0 if self.queue is None else self.queue.qsize()

    async def submit(self, request: dict[str, Any]) -> dict[str, Any]:
        """The worker's answer for `request`, run in a batch with whatever else is waiting in this lane."""
        if self.task is None or self.task.done():  # started on first use: on the loop that serves the requests
            self.queue = asyncio.Queue()
            self.task = asyncio.get_running_loop().create_task(self.serve(), name=f"lane {self.name}")
        future = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((request, future))
        return await future

    async def gather(self) -> list[tuple[dict[str, Any], asyncio.Future]]:
        """The next batch: the first waiting request, then every request already waiting, then what arrives
        within wait_s of the first (at most max_batch_size); requests nobody waits for any more are left out."""
        assert self.queue is not None
        batch = [await self.queue.get()]
        deadline = time.monotonic() + self.wait_s
        while len(batch) < self.max_batch_size:
            if self.queue.empty():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(self.queue.get(), left))
                except TimeoutError:
                    break
            else:
                batch.append(self.queue.get_nowait())
        return [(request, future) for request, future in batch if not future.done()]

    async def serve(self) -> None:
        while True:
            batch = await self.gather()
            if not batch:
                continue
            self.running = len(batch)
            try:
                answers = await asyncio.to_thread(self.run, Batch([r for r, _ in batch], [f for _, f in batch]))
            except Exception as e:  # the worker answers per request; this is a bug, the service's, said to the batch
                sentence = internal_error(f"running a batch of {len(batch)} in lane {self.name!r}", e)
                answers = [{"error": sentence, "status": 500}] * len(batch)
            finally:
                self.running = 0
            for (_, future), answer in zip(batch, answers, strict=True):
                if not future.done():
                    future.set_result(answer)


class Lanes:
    """A model's two lanes, light and heavy; `heavy(request)` says which a request takes."""

    def __init__(self, run: Run, heavy: Callable[[dict[str, Any]], bool], max_batch_size: int, wait_s: float,
                 heavy_batch_size: int = 4, name: str = ""):
        self.heavy = heavy
        self.light_lane = Lane(run, max_batch_size, wait_s, f"{name} light")
        self.heavy_lane = Lane(run, heavy_batch_size, wait_s, f"{name} heavy")

    async def submit(self, request: dict[str, Any]) -> dict[str, Any]:
        return await (self.heavy_lane if self.heavy(request) else self.light_lane).submit(request)

    def load(self) -> dict[str, int]:
        """Requests waiting and running per lane (GET /stats)."""
        return {f"{kind}_{what}": getattr(lane, what) for kind, lane in
                (("light", self.light_lane), ("heavy", self.heavy_lane)) for what in ("waiting", "running")}
