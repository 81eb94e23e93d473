"""Timing the loaded systems on the same inputs, round after round (runtime.timing.interleaved), and recording what
each one output so the page can say whether they agree. No Streamlit here: the page passes its progress bar in."""
from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runtime import timing

from .report import PYTORCH, LatencyResult, agreement


@dataclass
class Workload:
    """What every system is timed on."""
    task: str  # "translate" or "sentiment"
    texts: list[str]  # the inputs, one per run in turn
    direction: tuple[str, str] | None = None  # the translator's (source, target) languages
    method: str | None = None  # the translator's decoding: "greedy" or "beam" (beam width 4)


class Recorder:
    """Each system's call per round, remembering its outputs (token ids or label) and which inputs were truncated."""

    def __init__(self, work: Workload, systems: dict[str, Any]):
        self.work = work
        self.outputs: dict[str, dict[int, Any]] = {name: {} for name in systems}  # system -> input -> its output
        self.truncated: set[int] = set()
        self.calls = {name: self.call(name, system) for name, system in systems.items()}

    def call(self, name: str, system: Any) -> Callable[[int], int]:
        work = self.work

        def run(r: int) -> int:
            i = r % len(work.texts)
            if work.task == "translate":
                out = system.translate([work.texts[i]], src_lang=work.direction[0], tgt_lang=work.direction[1],
                                       method=work.method, beam=4)[0]
                produced, self.outputs[name][i] = len(out.token_ids), tuple(out.token_ids)
            else:
                out = system.classify([work.texts[i]])[0]
                produced, self.outputs[name][i] = len(out.tokens), out.label
            if out.truncated:
                self.truncated.add(i)
            return produced

        return run


def measure(work: Workload, systems: dict[str, Any], runs: int, warmup: int, threads: int,
            progress: Callable[[int, int, LatencyResult | None], None], torch_side=None) -> LatencyResult:
    """Time `systems` (name -> model; the first is the reference) on `work`: warm-up then `runs` timed rounds.

    progress(done, total, so_far) is called before every round, so_far being the result of the rounds timed so
    far, marked as stopped there (None while warming up): what the page keeps when Stop interrupts it there.
    torch_side: the PyTorch column's module (playground.latency.pytorch) when "PyTorch eager" is among the
    systems: it pins torch's thread count like onnxruntime's while they are timed, and reads it back."""
    if not systems:
        raise RuntimeError("no system could be loaded (see the messages above)")
    recorder = Recorder(work, systems)
    with_torch = PYTORCH in systems and torch_side is not None
    reference = next(iter(systems))  # PyTorch eager where it runs, else onnxruntime fp32
    partial: dict[str, tuple[list, int]] = {}

    def result(measured: dict[str, tuple[list, int]], torch_threads: int | None,
               stopped: tuple[int, int] | None = None) -> LatencyResult:
        return LatencyResult(measured=measured, threads=threads, torch_threads=torch_threads, texts=len(work.texts),
                             method=work.method, truncated=sorted(recorder.truncated), reference=reference,
                             agreement=agreement(recorder.outputs, reference), stopped=stopped)

    def progress_so_far(done: int, total: int) -> None:
        timed = partial and all(partial.get(name, ([], 0))[0] for name in systems)
        so_far = result({name: (list(partial[name][0]), partial[name][1]) for name in systems},
                        torch_side.thread_count() if with_torch else None, (done, total)) if timed else None
        progress(done, total, so_far)

    with torch_side.pinned_threads(threads) if with_torch else contextlib.nullcontext():
        measured = timing.interleaved(recorder.calls, runs, warmup, progress_so_far, partial=partial)
        torch_threads = torch_side.thread_count() if with_torch else None
    return result(measured, torch_threads)
