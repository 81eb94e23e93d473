"""A latency measurement in words, tables and a figure: what the Latency page shows (no Streamlit here)."""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from runtime.timing import percentile

PYTORCH = "PyTorch eager"  # the reference system wherever torch runs
NOISE = "noise (p10–p90 vs PyTorch)"  # a speed-up whose two p10-p90 ranges overlap is within noise
SPEED_UP = "speed-up vs PyTorch"


@dataclass
class LatencyResult:
    """One measurement, kept in the session until the next one replaces it: complete, or the rounds timed before a
    Stop (`stopped`)."""
    measured: dict[str, tuple[list[float], int]]  # system -> (seconds per timed run, tokens produced)
    threads: int  # onnxruntime intra-op threads
    torch_threads: int | None  # torch's thread count while timed; None without a PyTorch column
    texts: int  # distinct inputs timed
    method: str | None  # the translator's decoding ("greedy", "beam"); None for the classifier
    truncated: list[int]  # inputs longer than the model's limit (timed on their beginning)
    reference: str  # the system the others' outputs are compared with: PyTorch where it runs, else the first
    agreement: dict[str, tuple[int, int]]  # system -> (inputs with the reference's output, inputs compared)
    stopped: tuple[int, int] | None = None  # a partial result: (rounds done, rounds planned) when Stop came


def spread(times: list[float]) -> tuple[float, float]:
    """(p10, p90) of a system's timed runs."""
    return percentile(times, 10), percentile(times, 90)


def within_noise(times: list[float], reference: list[float]) -> bool:
    """Whether a ratio of the two medians could be noise: the p10-p90 ranges overlap (the rule `python -m
    bench runtimes` distrusts its ratios by)."""
    (low, high), (ref_low, ref_high) = spread(times), spread(reference)
    return low <= ref_high and ref_low <= high


def agreement(outputs: dict[str, dict[int, Any]], reference: str) -> dict[str, tuple[int, int]]:
    """system -> (inputs whose output equals the reference system's, inputs it ran on)."""
    return {name: (sum(outputs[reference].get(i) == out for i, out in seen.items()), len(seen))
            for name, seen in outputs.items()}


def same_as_column(result: LatencyResult) -> str:
    return f"same output as {'PyTorch' if result.reference == PYTORCH else result.reference}"


def agreement_words(name: str, result: LatencyResult) -> str:
    same, compared = result.agreement.get(name, (0, 0))
    if name == result.reference:
        return "reference"
    if not compared:
        return "not compared"
    if same == compared:
        return f"same on {same} of {compared} input(s)"
    return f"differs on {compared - same} of {compared} input(s)"


def result_rows(result: LatencyResult) -> list[dict[str, Any]]:
    """One row per system: p50, p90, the p10-p90 spread, tokens/s; beside PyTorch, the speed-up and whether it
    is beyond noise; and whether its outputs were the reference's."""
    measured = result.measured
    base = statistics.median(measured[PYTORCH][0]) if PYTORCH in measured else None
    rows = []
    for name, (times, tokens) in measured.items():
        p50 = statistics.median(times)
        low, high = spread(times)
        row = {"system": name, "p50 ms": round(p50 * 1e3, 2),
               "p90 ms": round(float(np.percentile(times, 90)) * 1e3, 2),
               "p10–p90 ms": f"{low * 1e3:.2f}–{high * 1e3:.2f}",
               "tokens/s": round(tokens / sum(times), 1) if sum(times) else 0.0}
        if base:
            row[SPEED_UP] = round(base / p50, 2)
            row[NOISE] = ("reference" if name == PYTORCH else
                          "within noise" if within_noise(times, measured[PYTORCH][0]) else "beyond noise")
        row[same_as_column(result)] = agreement_words(name, result)
        rows.append(row)
    return rows


def run_caption(result: LatencyResult, task: str) -> str:
    """How the numbers were taken: runs, threads, inputs, decoding, and what "same output" compares."""
    torch_part = f"torch {result.torch_threads} thread(s)" if result.torch_threads else "no PyTorch column"
    compared = "the same translation token ids" if task == "translate" else "the same label"
    return (f"{len(next(iter(result.measured.values()))[0])} timed runs after warm-up · onnxruntime "
            f"{result.threads} intra-op thread(s) · {torch_part} · {result.texts} distinct input(s)"
            + (f" · {result.method} decoding" if result.method else "")
            + f" · {same_as_column(result)}: {compared} for each timed input")


def speed_ups(rows: list[dict[str, Any]], result: LatencyResult) -> list[tuple[str, str, str]]:
    """(label, value, note) of each speed-up figure beside PyTorch; none without a PyTorch column."""
    same_as = same_as_column(result)
    return [(f"{row['system']} speed-up", f"{row[SPEED_UP]:.2f}×",
             f"{row[NOISE]} (p10–p90 ranges {'overlap' if row[NOISE] == 'within noise' else 'apart'})"
             f" · outputs {row[same_as]}")
            for row in rows if SPEED_UP in row and row["system"] != PYTORCH]


def truncated_note(result: LatencyResult) -> str | None:
    if not result.truncated:
        return None
    return (f"{len(result.truncated)} input(s) exceeded the model's token limit and were truncated: the times are "
            "for their beginning only.")


def stopped_note(stopped: dict[str, int], previous_kept: bool) -> str:
    """What a Stop before any timed round left: how far the measurement got, and whether older results are still
    shown."""
    return (f"Stopped after {stopped['done']} of {stopped['total']} rounds, all of them warm-up: no timing of that "
            "measurement to keep. " + ("The results below are from the previous complete run." if previous_kept
                                       else "Click Run to measure again."))


def partial_note(result: LatencyResult) -> str:
    """Over a partial result: that it is one, and how much of the measurement it holds."""
    done, total = result.stopped
    timed = len(next(iter(result.measured.values()))[0])
    return (f"Partial result: stopped after {done} of {total} rounds. The numbers below come from the {timed} timed "
            f"run{'s' * (timed != 1)} per system made before the Stop: fewer than asked for, so they are less sure. "
            "Click Run to measure in full.")


def box_figure(result: LatencyResult) -> go.Figure:
    """Every timed call of every system, in ms."""
    fig = go.Figure()
    for name, (times, _) in result.measured.items():
        fig.add_trace(go.Box(y=[t * 1e3 for t in times], name=name, boxpoints="all", jitter=0.4, pointpos=0))
    fig.update_layout(title="Latency per call (ms)", yaxis_title="ms", height=420, showlegend=False,
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


# ---------------------------------------------------------------- the saved `bench runtimes` results

def saved_bench(found: Any, task: str) -> dict[str, Any] | None:
    """The task's results from a bench.json as read (a --json file may hold several models), or None."""
    if isinstance(found, list):
        found = next((b for b in found if isinstance(b, dict) and b.get("task") == task), None)
    return found if isinstance(found, dict) and found.get("results") else None


def bench_caption(bench: dict[str, Any]) -> str:
    versions = bench.get("versions", {})
    return (f"{bench.get('model_dir')} · {bench.get('threads')} threads · {bench.get('repeats')} repeats · "
            f"CPU: {versions.get('cpu', '?')} · onnxruntime {versions.get('onnxruntime', '?')}")


def target_lines(bench: dict[str, Any]) -> list[str]:
    """Each speed target bench runtimes checked, met or missed."""
    return [f"- target **{name}**: ≥ {target.get('target')}× — reached {target.get('reached', 0):.2f}× "
            f"({'met' if target.get('met') else 'missed'})" for name, target in (bench.get("targets") or {}).items()]


def bench_table_text(bench: dict[str, Any]) -> str | None:
    """The markdown table bench runtimes printed, saved with its results (None in a bench.json from before)."""
    return bench["table"] if isinstance(bench.get("table"), str) else None
