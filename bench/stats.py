"""The statistics behind `python -m bench runtimes` (its rounds are `runtime.timing.interleaved`): medians with their
spread, and which ratios not to believe.

Timings on a shared machine drift (other jobs start and stop) and jitter (a preempted OpenMP thread stalls a
whole op). Two defences: every round runs each measured call once, in a rotated order, so a drift hits all
systems alike; and each ratio is set against the spread (p10-p90) of both sides and the machine's load, so a
ratio that noise could produce is named as distrusted instead of reported as a finding.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from runtime.timing import percentile

BUSY_SHARE = 0.5  # other work above this share of the cores: every ratio is distrusted


@dataclass
class CaseResult:
    case: str  # e.g. "greedy-b16", "b1x64"
    system: str  # torch | ort-fp32 | ort-int8 | ct2-fp32 | ct2-int8 (| ct2-<p>-t1: CTranslate2 at 1 thread)
    p50_ms: float
    p90_ms: float
    tokens_per_s: float  # tokens processed (classifier) or generated (translation) per second, at p50
    speedup: float  # torch p50 / this p50
    p10_ms: float = 0.0  # with p90: the spread a ratio must clear to be believed
    vs_ct2: float | None = None  # ort-<p>: CTranslate2 <p>'s p50 / this p50 (same weights), when it was measured
    rounds: int = 0  # timed runs behind the p50
    ct2_peer: str | None = None  # which CTranslate2 row vs_ct2 compares with: the faster of its thread settings


def ct2_peer(system: str, measured: dict[str, tuple[list, int]]) -> str | None:
    """The CTranslate2 row an onnxruntime row `ort-<p>` is compared with: the fastest (p50) of `ct2-<p>` and its
    other thread settings (`ct2-<p>-t1`...), since on some machines its 2-thread runs are the slower (measured)."""
    if not system.startswith("ort-"):
        return None
    peer = system.replace("ort-", "ct2-")
    candidates = [n for n in measured if n == peer or n.startswith(peer + "-t")]
    return min(candidates, key=lambda n: statistics.median(measured[n][0]), default=None)


def summarise(case: str, measured: dict[str, tuple[list, int]]) -> list[CaseResult]:
    """One row per system: median, p10/p90, throughput, ratio to torch and to the (fastest) CTranslate2 peer."""
    base = statistics.median(measured["torch"][0])
    results = []
    for name, (times, tokens) in measured.items():
        p50 = statistics.median(times)
        per_call_tokens = tokens / len(times)
        peer = ct2_peer(name, measured)
        vs_peer = round(statistics.median(measured[peer][0]) / p50, 3) if peer else None
        results.append(CaseResult(case, name, round(p50 * 1e3, 3), round(percentile(times, 90) * 1e3, 3),
                                  round(per_call_tokens / p50, 1), round(base / p50, 2),
                                  round(percentile(times, 10) * 1e3, 3), vs_peer, len(times), peer))
    return results


def machine_busy(load: dict[str, float | None], cpus: int, threads: int) -> str | None:
    """Why the machine counted as busy during the run, or None: other work's 1-minute load above half the cores,
    or above the cores the benchmark's own threads leave free (+0.5). The "after" figure includes the benchmark's
    own threads, so those are taken off it."""
    limit = min(BUSY_SHARE * cpus, cpus - threads + 0.5)
    before, after = load.get("before"), load.get("after")
    if before is not None and before > limit:
        return f"load {before} before the run > {limit:g} on {cpus} cores"
    if after is not None and after - threads > limit:
        return f"load {after} after the run ({after - threads:.2f} beyond its {threads} threads) > {limit:g} " \
               f"on {cpus} cores"
    return None


def ratio_pairs(r: CaseResult) -> list[tuple[str, str]]:
    """(the other system, ratio label) for each ratio reported on row `r`."""
    if r.system == "torch":
        return []
    pairs = [("torch", "× torch")]
    if r.vs_ct2 is not None:
        pairs.append((r.ct2_peer or r.system.replace("ort-", "ct2-"), "÷ CTranslate2"))
    return pairs


def distrusted(results: list[CaseResult], busy: str | None = None) -> list[str]:
    """Each ratio not to believe, named with why: the two sides' p10-p90 ranges overlap (the spread is larger
    than the gap), or the machine was busy (`machine_busy`: every ratio then)."""
    by_case = {(r.case, r.system): r for r in results}
    doubts = []
    for r in results:
        for other_name, label in ratio_pairs(r):
            other = by_case.get((r.case, other_name))
            if other is None:
                continue
            if busy:
                doubts.append(f"{r.case} {r.system} {label}: the machine was busy ({busy})")
            elif r.p10_ms <= other.p90_ms and other.p10_ms <= r.p90_ms:
                doubts.append(f"{r.case} {r.system} {label}: p10-p90 {r.p10_ms:.1f}-{r.p90_ms:.1f} ms overlaps "
                              f"{other.system}'s {other.p10_ms:.1f}-{other.p90_ms:.1f} ms")
    return doubts


def rotated_rounds(calls: dict[str, Callable[[], object]], repeats: int,
                   timed: Callable[[Callable[[], object]], float]) -> dict[str, list[float]]:
    """Every call once as a warm-up (first runs allocate), then `repeats` rounds that each run every call once in a
    rotated order, so drift from other work on the machine hits all of them alike -> {name: one time per round}."""
    names = list(calls)
    for name in names:
        calls[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_no in range(repeats):
        for name in names[round_no % len(names):] + names[:round_no % len(names)]:
            times[name].append(timed(calls[name]))
    return times
