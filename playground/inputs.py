"""Text in and out: cleaning typed lines, examples to start from, CSV uploads and safe CSV downloads.
"""
from __future__ import annotations

import functools
import io
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from runtime import tsv

from .model_paths import first_line, model_dir, stamp

MAX_LINES = 200  # lines per batch request: more waits too long in a browser

# Used when a model directory has no samples.tsv.
BUILTIN_EXAMPLES = {
    "de": ["Ich trinke keinen Alkohol.", "Kannst du Auto fahren?", "Das Wetter ist heute schön.",
           "Wo ist die nächste Apotheke?", "Ich verstehe nicht, was du meinst.",
           "Könnten Sie bitte etwas langsamer sprechen?"],
    "en": ["I do not drink alcohol.", "Can you drive a car?", "The weather is nice today.",
           "Where is the nearest pharmacy?", "I do not understand what you mean.",
           "Could you please speak a little more slowly?"],
    "review": ["a gem of a film, warm and funny", "dull, slow and far too long",
               "the best thing I have seen this year", "a mess of a script and wooden acting"],
}



# ---------------------------------------------------------------- text in

def visible(text: str) -> bool:
    """Whether the text holds anything a reader can see: a line of zero-width spaces, joiners, BOMs or other
    format characters (Unicode category Cf) is as empty as a blank one, and must not be translated into words."""
    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in text)


def too_many(count: int) -> str | None:
    """The notice for a text box over MAX_LINES lines (the page shows it), else None."""
    return f"{count} lines given: only the first {MAX_LINES} are processed." if count > MAX_LINES else None


def split_lines(text: str | None) -> tuple[list[str], str | None]:
    """Non-empty lines, stripped, at most MAX_LINES; and the notice to show when more were given."""
    lines = [line.strip() for line in (text or "").splitlines() if visible(line)]
    return lines[:MAX_LINES], too_many(len(lines))


def read_tsv(path: Path) -> list[dict[str, str]]:
    """A model directory's samples.tsv or examples.tsv (runtime.tsv's format), one dict per row; a missing or broken
    file (a row with too few or too many fields, not UTF-8) reads as no rows, and the page shows built-in examples."""
    try:
        return tsv.read_tsv(path)
    except tsv.DataError:
        return []


@functools.lru_cache(maxsize=16)  # keyed by the file's version stamp: an edited file is read again
def _samples(task: str, version: tuple) -> list[dict[str, str]]:
    return read_tsv(model_dir(task) / "samples.tsv")


def examples(task: str, column: str, limit: int = 12) -> list[str]:
    """Example texts from the model's samples.tsv (test-set sentences), else a built-in list.

    column: "de"/"en" for translation sources, "text" for reviews."""
    rows = _samples(task, stamp(task, "samples.tsv"))
    sample_texts = [r[column].strip() for r in rows if (r.get(column) or "").strip()]
    seen: list[str] = []
    for text in sample_texts:
        if text not in seen:
            seen.append(text)
    if seen:
        return seen[:limit]
    return BUILTIN_EXAMPLES.get(column if column in ("de", "en") else "review", BUILTIN_EXAMPLES["review"])


def known_label(task: str, text: str) -> str | None:
    """The label a review has in the model's samples.tsv (test-set reviews), else None."""
    rows = _samples(task, stamp(task, "samples.tsv"))
    return next((r["label"] for r in rows if (r.get("text") or "").strip() == text.strip() and r.get("label")), None)


@functools.lru_cache(maxsize=16)
def _curated(task: str, version: tuple) -> list[dict[str, str]]:
    return read_tsv(model_dir(task) / "examples.tsv")


def curated_examples(src: str, tgt: str) -> list[dict[str, str]]:
    """Starting examples for a direction: the model dir's `examples.tsv` (direction, source, output, verdict,
    note), sentences whose output was judged by hand, those it gets right first, then those it fails, so a
    visitor sees both; without that file, test-set sentences with no verdict."""
    rows = [r for r in _curated("translate", stamp("translate", "examples.tsv"))
            if r.get("direction") == f"{src}-{tgt}" and (r.get("source") or "").strip()]
    rows.sort(key=lambda r: r.get("verdict") != "works")  # stable: the file's order inside each group
    return rows or [{"source": text, "verdict": ""} for text in examples("translate", src)]


def verdict_label(row: dict[str, str]) -> str:
    """"✓ text" / "✗ text (why)" for the example picker."""
    verdict, note = row.get("verdict"), row.get("note")
    if verdict == "works":
        return f"✓ {row['source']}"
    if verdict == "fails":
        return f"✗ {row['source']}" + (f" ({note})" if note else "")
    return row["source"]


def read_csv_table(data: bytes) -> tuple[pd.DataFrame, str]:
    """Every row and column of an uploaded CSV, as text in file order, and the name of its text column (`text`,
    else `review` or `sentence`, else the last one). Blank rows stay (the download keeps and marks them); blank
    lines at the end of the file are no rows. Raises ValueError when the file is not UTF-8, does not parse, has no
    text to classify, or holds more than MAX_LINES texts.

    A file whose header is one name without a comma ("text") is a list, one text per line: its lines
    may hold unquoted commas ("warm, funny and smart"), which a CSV parser would split into fields."""
    try:
        decoded = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"it is not UTF-8 text ({e.reason})") from e
    lines = decoded.splitlines()
    while lines and not visible(lines[-1]):
        lines.pop()
    if lines and "," not in lines[0] and '"' not in decoded:
        frame = pd.DataFrame({lines[0].strip() or "text": lines[1:]}, dtype=object)
    else:
        try:
            frame = pd.read_csv(io.StringIO("\n".join(lines)), dtype=str, keep_default_na=False,
                                skip_blank_lines=False)
        except Exception as e:
            raise ValueError(f"it does not read as CSV: {first_line(e)}") from e
    lower = {str(c).lower().strip(): c for c in frame.columns}
    column = lower.get("text") or lower.get("review") or lower.get("sentence") or frame.columns[-1]
    if frame.empty:
        raise ValueError("it has no rows")
    non_blank = sum(visible(t) for t in frame[column])
    if not non_blank:
        raise ValueError(f"it has no text to classify in its `{column}` column, only blank rows")
    if non_blank > MAX_LINES:
        raise ValueError(f"it holds {non_blank} texts and at most {MAX_LINES} are classified per file: split it")
    return frame, column


def texts_from_csv(data: bytes) -> list[str]:
    """The texts of an uploaded CSV's text column (read_csv_table), stripped, blank ones left out."""
    frame, column = read_csv_table(data)
    return [t.strip() for t in frame[column] if visible(t)]


def numbered_lines(text: str | None) -> tuple[pd.DataFrame, str | None]:
    """Typed texts, one per line, with their line numbers (`line`, from 1) so results can be matched back to the
    text box; blank lines are left out, at most MAX_LINES texts; and the notice to show when more were given."""
    found = [(i, line.strip()) for i, line in enumerate((text or "").splitlines(), 1) if visible(line)]
    kept = found[:MAX_LINES]
    return pd.DataFrame({"line": [i for i, _ in kept], "text": [t for _, t in kept]}), too_many(len(found))


BLANK_NOTE = "blank row: not classified"


def with_predictions(frame: pd.DataFrame, column: str, classify: Callable[[list[str]], list[Any]]) -> pd.DataFrame:
    """The input table, every column and row in order and untouched, followed by the model's columns: label,
    p_<label> per label, truncated, warning, note. A blank text is not classified: its label is empty, its
    probabilities missing, its note BLANK_NOTE. `classify` takes the stripped non-blank texts and returns runtime
    Predictions. A model column whose name the input already uses is called model_<name>; `table.attrs
    ["model_columns"]` maps each model column to the name it got."""
    texts = [str(t).strip() for t in frame[column]]
    rows = [i for i, t in enumerate(texts) if visible(t)]
    predictions = dict(zip(rows, classify([texts[i] for i in rows]), strict=True)) if rows else {}
    labels = list(next(iter(predictions.values())).probs) if predictions else []
    every = range(len(texts))
    added = {"label": [predictions[i].label if i in predictions else "" for i in every],
             **{f"p_{label}": [round(predictions[i].probs[label], 4) if i in predictions else None for i in every]
                for label in labels},
             "truncated": [predictions[i].truncated if i in predictions else None for i in every],
             "warning": [(predictions[i].warning or "") if i in predictions else "" for i in every],
             "note": ["" if i in predictions else BLANK_NOTE for i in every]}
    table = frame.reset_index(drop=True).copy()
    taken, names = set(map(str, table.columns)), {}
    for name, values in added.items():
        names[name] = name
        while names[name] in taken:
            names[name] = f"model_{names[name]}"
        taken.add(names[name])
        table[names[name]] = values
    table.attrs["model_columns"] = names  # {"label": the name it got, ...}
    return table


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet runs as a formula (CSV injection)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as CSV, every text cell that a spreadsheet would evaluate ("=1+1", "@SUM(...)") prefixed with
    an apostrophe, so opening the download never runs what a user typed (OWASP's advice)."""
    safe = frame.copy()
    for column in safe.columns:
        if any(isinstance(v, str) for v in safe[column]):
            safe[column] = [f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_START) else v
                            for v in safe[column]]
    return safe.to_csv(index=False).encode("utf-8")



def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    import time

    start = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - start) * 1e3
