"""The toy tasks' contract, shared by `tx.toy` (which trains) and the "Train your own" page (which checks an upload
and states the limits before anything is trained), without torch: the page imports it in the server.

- the user's own pairs: a parallel TSV (source<TAB>target) or a labelled CSV (text,label), checked line by line,
  every problem naming its line so a learner can fix the file (`parse`, `check`), within the limits below;
- the vocabulary: whitespace-separated words (no subword tokenizer: the point is a model that trains in seconds),
  the tokenizer's specials and the one direction's tag reserved (`RESERVED`), the one direction (`DIRECTION`);
- the model-size cap (`MAX_PARAMETERS`), stated by the page and enforced by `tx.toy.engine`;
- what the Try-it box says of an input with symbols the model never saw (`unseen_warning`): a toy model's vocabulary
  is its task's symbols, so runtime.coverage's measures for German and English text (letters, Latin script) do not
  apply; digits are all a digit-trained model knows;
- the files a training process and the page exchange (`SPEC_FILE`, `EVENTS_FILE`, `MODEL_DIR`) and the held-out
  pairs a shipped toy model keeps (`HELD_OUT_FILE`, one source<TAB>target a line).

A labelled CSV becomes a one-token target, so one sequence-to-sequence model serves both file kinds.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .tokenizer import EOS, SPECIALS, UNK

MAX_BYTES = 1_000_000  # an upload larger than this is refused before it is read
MAX_ROWS = 5000  # more rows would not train in a page's time cap anyway
MIN_ROWS = 20  # fewer leave no held-out rows worth scoring
MAX_TOKENS = 30  # per side: the model's positions and the decoder steps stay small
MAX_VOCAB = 2000  # distinct tokens over both sides; each is an embedding row
MAX_PARAMETERS = 5_000_000  # hard ceiling on model size: every step must stay milliseconds on a CPU
# the limits as the page says them before an upload
UPLOAD_LIMITS = (f"At most {MAX_ROWS:,} rows, {MAX_TOKENS} tokens a side, {MAX_VOCAB:,} distinct tokens, "
                 f"{MAX_BYTES // 10**6} MB")

DIRECTION = ("in", "out")  # the one direction of every toy model (its meta "directions"), whose target tag is <2out>
TAG = f"<2{DIRECTION[1]}>"
RESERVED = (*SPECIALS, TAG)  # the tokenizer's own tokens, at ids 0..6; a file may not use them

SPEC_FILE, EVENTS_FILE, MODEL_DIR = "spec.json", "events.jsonl", "model"  # in a training process's run folder
HELD_OUT_FILE = "heldout.tsv"  # in a toy model directory: the examples its run never trained on

HEADERS = {("source", "target"), ("src", "tgt"), ("text", "label"), ("input", "output")}


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


def too_big(size: int) -> str:
    return f"the file has {size:,} bytes; at most {MAX_BYTES:,} are accepted"


def parse(raw: bytes, name: str) -> ParallelData:
    """Check an uploaded file's bytes; `name` picks the kind (.csv: labelled CSV, else TSV). Raises DataError."""
    if not raw.strip():
        raise DataError("the file is empty")
    if len(raw) > MAX_BYTES:
        raise DataError(too_big(len(raw)))
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


def check(raw: bytes, name: str) -> dict[str, Any]:
    """{"ok": true, "rows", "vocabulary", "kind", "skipped_header"} or {"ok": false, "error"}: the page's verdict."""
    try:
        data = parse(raw, name)
    except DataError as e:
        return {"ok": False, "error": str(e)}
    return {"ok": True, "rows": len(data.pairs), "vocabulary": len(data.vocabulary), "kind": data.kind,
            "skipped_header": data.skipped_header}


def write_held_out(directory: Path, pairs: list[tuple[list[str], list[str]]]) -> None:
    rows = [f"{' '.join(source)}\t{' '.join(target)}" for source, target in pairs]
    (directory / HELD_OUT_FILE).write_text("\n".join(rows) + "\n", encoding="utf-8")


def read_held_out(directory: Path) -> list[tuple[str, str]]:
    """A toy model directory's held-out (source, target) pairs, tokens space-separated; [] when it has none."""
    path = directory / HELD_OUT_FILE
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return [tuple(line.split("\t")) for line in lines if line]  # type: ignore[misc]


def unseen_warning(text: str, src_tokens: list[str]) -> str | None:
    """What to say of an input whose words the toy model never saw (each is read as <unk>), else None.
    `src_tokens` is the translation's source as the model read it (runtime.text.Translation.src_tokens: the tag,
    one token per word, </s>); the words come from `text`, so the message names them as the user typed them."""
    pieces = [t for t in src_tokens if t not in (TAG, EOS)]
    unseen = list(dict.fromkeys(word for word, piece in zip(text.split(), pieces, strict=False) if piece == UNK))
    if not unseen:
        return None
    shown = ", ".join(f"`{w}`" for w in unseen[:5]) + (f" and {len(unseen) - 5} more" if len(unseen) > 5 else "")
    return (f"{len(unseen)} of the input's symbols {'was' if len(unseen) == 1 else 'were'} never in this model's "
            f"training ({shown}): it reads each as <unk>, so its output for them means little.")
