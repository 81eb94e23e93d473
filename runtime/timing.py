"""Timing calls side by side: every round runs each call once in a rotated order, so a drift in the machine's
load hits every system alike. What `python -m bench runtimes` and the app's Latency page both measure with."""
from __future__ import annotations

import time
from collections.abc import Callable, Hashable

import numpy as np


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def schedule(total_rounds: int, runs: int) -> set[int]:
    """The `runs` rounds out of `total_rounds` a call runs in, spread evenly (a call with fewer runs than the
    others still meets every part of the measurement, not only its start)."""
    return {i * total_rounds // runs for i in range(runs)}


def interleaved(calls: dict[Hashable, Callable[[int], int]], repeats: int, warmup: int,
                progress: Callable[[int, int], None] | None = None,
                runs: dict[Hashable, tuple[int, int]] | None = None,
                partial: dict[Hashable, tuple[list, int]] | None = None) -> dict[Hashable, tuple[list, int]]:
    """Run each call(round) -> tokens once per round, rotating the order; {key: (seconds per timed run, tokens)}.

    runs: key -> (warm-up, timed) for keys that need fewer runs than `warmup + repeats` (slow cases); they run
    in rounds spread over the whole measurement. progress(done, total) is called before every round; it may
    raise to stop the measurement (the app's Stop button: Streamlit interrupts the script at its next call).
    partial: a dict filled with the same {key: (seconds, tokens)} as the rounds go, so a caller whose progress
    call stopped the measurement still has the rounds already timed."""
    runs = runs or {}
    partial = {} if partial is None else partial
    plan = {k: runs.get(k, (warmup, repeats)) for k in calls}
    total = max((w + n for w, n in plan.values()), default=0)
    rounds_of = {k: schedule(total, w + n) for k, (w, n) in plan.items()}
    times: dict[Hashable, list[float]] = {k: [] for k in calls}
    tokens: dict[Hashable, int] = {k: 0 for k in calls}
    done: dict[Hashable, int] = {k: 0 for k in calls}  # runs so far, warm-up included
    for r in range(total):
        if progress is not None:
            progress(r, total)
        active = [k for k in calls if r in rounds_of[k]]
        shift = r % len(active)  # never 0 keys: the longest plan runs in every round
        for key in active[shift:] + active[:shift]:
            start = time.perf_counter()
            count = calls[key](r)
            elapsed = time.perf_counter() - start
            done[key] += 1
            if done[key] > plan[key][0]:  # past its warm-up runs
                times[key].append(elapsed)
                tokens[key] += count
                partial[key] = (times[key], tokens[key])
    return {k: (times[k], tokens[k]) for k in calls}
