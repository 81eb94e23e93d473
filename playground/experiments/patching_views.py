"""The patching experiment's Report (playground.experiments.report): the two outputs, the metric, the alignment,
one grid as a heatmap, and a re-translated cell. Pure: no Streamlit."""
from __future__ import annotations

import numpy as np

from . import figures
from .report import Figure, Report

SHORT_POINTS = {"embeddings": "emb"}  # column labels a phone can hold: "emb", "L1", "L2" ...


def point_label(label: str) -> str:
    return SHORT_POINTS.get(label, label.replace("after layer ", "L"))


def shown_values(grid) -> tuple[np.ndarray, str, str | None]:
    """The values the heatmap draws: normalised when it can be, else the raw metric and the reason."""
    try:
        return grid.normalised, "restored", None  # 0 = the corrupted run, 1 = the clean run (the caption says)
    except ValueError as e:
        return grid.raw, "metric", str(e)


def grid_rows(grid, values: np.ndarray) -> list[dict]:
    """figures.grid rows. Position grids are drawn with positions down the side and the points across (4 short
    columns fit a phone; 20 token columns did not); head grids with layers down and heads across. NaN cells (left
    out) are not drawn."""
    rows = []
    for r, row in enumerate(grid.cells):
        for c, cell in enumerate(row):
            if cell is None or not np.isfinite(values[r, c]):
                continue
            if grid.site in ("enc_self", "dec_self", "dec_cross"):
                y, x = grid.rows[r], grid.columns[c].replace("head ", "")
            else:
                y, x = f"{c} {grid.columns[c]}", point_label(grid.rows[r])
            rows.append({"x": x, "y": y, "v": round(float(values[r, c]), 6), "cell": f"{r}.{c}"})
    return rows


def cell_options(grid) -> list[str]:
    """Every patched cell as "row.column", largest normalised (or raw) value first."""
    values, _, _ = shown_values(grid)
    cells = [(r, c) for r, row in enumerate(grid.cells) for c, cell in enumerate(row) if cell is not None]
    return [f"{r}.{c}" for r, c in sorted(cells, key=lambda rc: -values[rc])]


def cell_label(grid, key: str) -> str:
    r, c = (int(i) for i in key.split("."))
    values, _, _ = shown_values(grid)
    return f"{grid.cells[r][c].label()}: {values[r, c]:+.3f}"


def pair_sentences(clean: str, corrupted: str, clean_out: str, corrupted_out: str, metric: str, clean_value: float,
                   corrupted_value: float, note: str | None) -> list[str]:
    sentences = [f"**Clean:** {clean} → {clean_out or '(empty output)'}",
                 f"**Corrupted:** {corrupted} → {corrupted_out or '(empty output)'}",
                 f"**Metric:** {metric}. Clean run {clean_value:+.3f}, corrupted run {corrupted_value:+.3f}."]
    return sentences + ([f"**Alignment:** {note}"] if note else [])


def grid_report(grid, title: str, sentences: list[str], inputs: dict[str, str]) -> Report:
    """One grid: its heatmap (diverging around 0), the cells that restore the most, and its notes."""
    values, value_name, refused = shown_values(grid)
    report = Report("Patch activations", inputs, list(sentences))
    if refused:
        report.sentences.append(f"Not normalised: {refused}")
    if grid.note and grid.note not in " ".join(sentences):
        report.sentences.append(grid.note)
    top = cell_options(grid)[:3]
    report.sentences.append("Cells that restore the most: " + "; ".join(cell_label(grid, k) for k in top)
                            + f". Computed in {grid.seconds:.2f} s.")
    spec = figures.grid(grid_rows(grid, values), f"{title}: the clean activation patched into the corrupted run, "
                        "one cell at a time", value_name, diverging=True,
                        x_title="head" if grid.site in ("enc_self", "dec_self", "dec_cross") else "layer")
    spec["layer"][0]["encoding"]["color"]["legend"] = {"orient": "bottom"}  # at the side it took a phone's width
    spec["height"] += 120  # the legend below, and every row's label kept (at the grid's height, every other one)
    report.figures.append(Figure(f"patch_{grid.site}", spec,
        "Restored: (patched − corrupted) / (clean − corrupted) of the metric; red: the patch moves it towards the "
        "clean run (1 = all the way), blue: away from it. emb = the embeddings, L1 = after layer 1. Positions "
        "left out by the alignment are not drawn."))
    return report


def retranslation_sentences(result) -> list[str]:
    return [f"**Re-translated with one patch** ({result.label}): {result.translation or '(empty output)'}",
            f"Beside it: clean “{result.clean}”, corrupted “{result.corrupted}”. "
            + ("The patch changed the corrupted output." if result.translation != result.corrupted else
               "The corrupted output did not change.")]
