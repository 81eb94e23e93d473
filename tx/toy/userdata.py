"""The user's own small data set: a parallel TSV (source<TAB>target) or a labelled CSV (text,label), checked
line by line. Every problem names its line, so a learner can fix the file.

Standard library only, on purpose: the page runs this file as a script (`python tx/toy/userdata.py FILE`)
to check an upload without importing torch (importing `tx` would), and prints the result as JSON.

Tokens are whitespace-separated words (no subword tokenizer: the point is a model that trains in seconds).
A labelled CSV becomes a one-token target, so one sequence-to-sequence model serves both file kinds.
"""
from __future__ import annotations

import csv
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

MAX_BYTES = 1_000_000  # an upload larger than this is refused before it is read
MAX_ROWS = 5000  # more rows would not train in a page's time cap anyway
MIN_ROWS = 20  # fewer leave no held-out rows worth scoring
MAX_TOKENS = 30  # per side: the model's positions and the decoder steps stay small
MAX_VOCAB = 2000  # distinct tokens over both sides; each is an embedding row
RESERVED = ("<pad>", "<s>", "</s>", "<unk>", "<2en>", "<2de>", "<2out>")  # the tokenizer's own specials


class DataError(ValueError):
    """A file that cannot be used, with a message that names the line."""


@dataclass
class ParallelData:
    """Checked pairs of token lists, and what kind of file they came from."""

    kind: str  # "tsv" (source -> target) or "csv" (text -> label)
    pairs: list[tuple[list[str], list[str]]] = field(default_factory=list)
    skipped_header: bool = False  # a first line "source<TAB>target" or "text,label" was taken as a header

    @property
    def vocabulary(self) -> list[str]:
        """Every distinct token, in first-seen order (the tokenizer's ids follow it)."""
        seen: dict[str, None] = {}
        for source, target in self.pairs:
            seen.update(dict.fromkeys(source + target))
        return list(seen)


HEADERS = {("source", "target"), ("src", "tgt"), ("text", "label"), ("input", "output")}


def parse(raw: bytes, name: str) -> ParallelData:
    """Check an uploaded file's bytes; `name` picks the kind (.csv: labelled CSV, else TSV). Raises DataError."""
    if not raw.strip():
        raise DataError("the file is empty")
    if len(raw) > MAX_BYTES:
        raise DataError(f"the file has {len(raw):,} bytes; at most {MAX_BYTES:,} are accepted")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise DataError(f"line {line}: not UTF-8 text (byte {e.start})") from e
    kind = "csv" if name.lower().endswith(".csv") else "tsv"
    rows = list(csv.reader(io.StringIO(text))) if kind == "csv" else [ln.split("\t") for ln in text.splitlines()]
    data = ParallelData(kind)
    for number, row in enumerate(rows, start=1):
        if not any(cell.strip() for cell in row):
            continue  # blank lines are allowed anywhere
        if len(row) != 2:
            want = "text,label (two comma-separated fields; quote a text that has commas)" if kind == "csv" \
                else "source<TAB>target (exactly one tab)"
            raise DataError(f"line {number}: {len(row)} field(s), expected {want}")
        source, target = row[0].split(), row[1].split()
        if number == 1 and tuple(c.strip().lower() for c in row) in HEADERS:
            data.skipped_header = True
            continue
        for side, tokens in (("source" if kind == "tsv" else "text", source),
                             ("target" if kind == "tsv" else "label", target)):
            if not tokens:
                raise DataError(f"line {number}: the {side} is empty")
            if len(tokens) > MAX_TOKENS:
                raise DataError(f"line {number}: the {side} has {len(tokens)} tokens; at most {MAX_TOKENS}")
            reserved = [t for t in tokens if t in RESERVED]
            if reserved:
                raise DataError(f"line {number}: {reserved[0]!r} is reserved for the model's own use")
        if kind == "csv" and len(target) != 1:
            raise DataError(f"line {number}: a label is one word, got {len(target)}: {row[1].strip()!r}")
        data.pairs.append((source, target))
        if len(data.pairs) > MAX_ROWS:
            raise DataError(f"line {number}: more than {MAX_ROWS} rows; at most {MAX_ROWS} are accepted")
    if len(data.pairs) < MIN_ROWS:
        raise DataError(f"{len(data.pairs)} usable row(s); at least {MIN_ROWS} are needed (some are held out "
                        "to score the model)")
    if len(data.vocabulary) > MAX_VOCAB:
        raise DataError(f"{len(data.vocabulary)} distinct tokens; at most {MAX_VOCAB} (a small vocabulary trains "
                        "in seconds)")
    return data


def check_file(path: Path) -> dict:
    """{"ok": true, "rows", "vocabulary", "kind", "skipped_header"} or {"ok": false, "error"}: the page's check."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:  # refused before reading it into memory
            raise DataError(f"the file has {size:,} bytes; at most {MAX_BYTES:,} are accepted")
        data = parse(path.read_bytes(), path.name)
    except DataError as e:
        return {"ok": False, "error": str(e)}
    return {"ok": True, "rows": len(data.pairs), "vocabulary": len(data.vocabulary), "kind": data.kind,
            "skipped_header": data.skipped_header}


if __name__ == "__main__":  # python tx/toy/userdata.py FILE -> one JSON line
    print(json.dumps(check_file(Path(sys.argv[1]))))
