"""The TSV files every layer shares: the corpus builder (`python -m corpus prepare`) writes them, training (`tx`)
reads them back, and the app reads a model directory's samples.tsv. Standard library only (and the one atomic
write, `runtime.files`), so each side imports it without the others.

The format: a header line, then one row per line; UTF-8, "\\n" line ends, tab-separated, no quoting, and fields
never contain tabs or line breaks (`clean_field` makes sure), so
`csv.DictReader(f, delimiter="\\t", quoting=csv.QUOTE_NONE)` reads every field back exactly. The headers below
are the processed layout's columns (which file holds which: `corpus`).
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .files import atomic_write_bytes

TRANSLATE_HEADER = ("de", "en", "kind", "source")
TRANSLATE_MIN_HEADER = ("de", "en")  # what a reader requires; kind and source are optional
SENTIMENT_HEADER = ("label", "text")
SENTIMENT_ALL_HEADER = ("label", "text", "fold")
KINDS = ("sentence", "phrase", "word")
LABELS = ("negative", "positive")
MANIFEST = "manifest.json"
# How a manifest describes these files to whoever reads them without this module.
FORMAT = {"delimiter": "\\t", "encoding": "utf-8", "quoting": "none (csv.QUOTE_NONE)",
          "fields": "no tabs or line breaks inside fields"}


class DataError(Exception):
    """Any problem with sources or inputs; the CLI prints it as one line and exits non-zero."""


_WS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")


def collapse_spaces(text: str) -> str:
    """Any whitespace run (tabs, line breaks) -> one space; none at either end."""
    return _WS.sub(" ", text).strip()


def clean_field(text: str) -> str:
    """A field as written to TSV: control characters dropped, any whitespace run (tabs, line breaks) -> one space."""
    return collapse_spaces(_CONTROL.sub(" ", text))


def tsv_text(header: Sequence[str], rows: Iterable[Mapping[str, object] | Sequence[object]]) -> str:
    out = io.StringIO()
    out.write("\t".join(header) + "\n")
    for row in rows:
        values = [row[k] for k in header] if isinstance(row, Mapping) else list(row)
        if len(values) != len(header):
            raise ValueError(f"row has {len(values)} fields, header {list(header)} has {len(header)}")
        out.write("\t".join(clean_field(str(v)) for v in values) + "\n")
    return out.getvalue()


def write_text(path: str | Path, text: str) -> None:
    """UTF-8 text written atomically (temp file + rename): a reader sees the old file or the new one."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_tsv(path: str | Path, header: Sequence[str], rows: Iterable[Mapping[str, object] | Sequence[object]]) -> None:
    """Write a header + rows (dicts keyed by header, or sequences) atomically (temp file + rename)."""
    write_text(path, tsv_text(header, rows))


def read_tsv(path: str | Path) -> list[dict[str, str]]:
    """Read a TSV back: one dict per row, keyed by the header. A missing or unreadable file, a row with too few or
    too many fields, or bytes that are not UTF-8 raise DataError naming the file."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            rows = []
            for row in reader:
                if None in row or None in row.values():
                    raise DataError(f"{path}:{reader.line_num}: expected {len(reader.fieldnames or [])} "
                                    "tab-separated fields")
                rows.append(row)
    except FileNotFoundError:
        raise DataError(f"{path} not found; run `python -m corpus prepare` first") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    except (OSError, csv.Error) as e:
        raise DataError(f"{path}: cannot read ({e})") from None
    return rows
