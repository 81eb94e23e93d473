"""The Sentiment page's words on a classified batch (a table from inputs.with_predictions, kept as the page's
`done` dict: table, source, file_id, ms, runtime): what was classified, where it came from, what to distrust.
Pure: no streamlit."""
from __future__ import annotations

from typing import Any

import pandas as pd


def classified(table: pd.DataFrame) -> pd.DataFrame:
    """The rows the model classified: with_predictions leaves their note empty (a blank row's says why not)."""
    return table[table[table.attrs["model_columns"]["note"]] == ""]


def truncated(done: dict[str, Any]) -> list[int]:
    """The numbers of the truncated texts: their line in the text box, or their row in the file (from 1)."""
    table = done["table"]
    numbers = table["line"] if done["file_id"] is None else pd.Series(range(1, len(table) + 1))
    cut = table[table.attrs["model_columns"]["truncated"]]
    return [int(n) for n, was in zip(numbers, cut, strict=True) if pd.notna(was) and bool(was)]


def summary(done: dict[str, Any]) -> str:
    """"**N reviews** in M ms: negative 3, positive 2"."""
    rows = classified(done["table"])
    counts = rows[done["table"].attrs["model_columns"]["label"]].value_counts()
    return (f"**{len(rows)} review{'s' if len(rows) != 1 else ''}** in {done['ms']:.0f} ms: "
            + ", ".join(f"{label} {n}" for label, n in counts.items()))


def source_caption(done: dict[str, Any]) -> str:
    """Where the texts came from (the text box, or the file with every row and column kept) and the runtime."""
    table, runtime = done["table"], f"{done['runtime'][0]} on {done['runtime'][1]}"
    if done["file_id"] is None:
        return f"From the text box (`line`: where each review was; blank lines skipped) · {runtime}"
    blank = len(table) - len(classified(table))
    note = table.attrs["model_columns"]["note"]
    return (f"From {done['source']}: all {len(table)} rows and every column of the file, in order"
            + (f"; {blank} blank row{'s' if blank != 1 else ''} kept and marked in `{note}`, not classified"
               if blank else "")
            + f" · {runtime}")


def outside_warning(table: pd.DataFrame) -> str | None:
    """How many texts are mostly outside what the model was trained on; None when none is."""
    warning = table.attrs["model_columns"]["warning"]
    outside = int((classified(table)[warning] != "").sum())
    if not outside:
        return None
    return (f"{outside} of them are mostly outside what the model was trained on (see the `{warning}` column): "
            "their labels mean little.")
