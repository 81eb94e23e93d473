"""The file contract shared by every data module: paths, errors, text keys, TSV and atomic writes.

Only standard-library code here: this package must run before anything else is installed.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from runtime.files import atomic_write_bytes

# --- paths and the file contract ------------------------------------------------------------------------------
DATA_DIR = Path("data")
SPLITS = ("train", "valid", "test")
TRANSLATE_HEADER = ("de", "en", "kind", "source")
TRANSLATE_MIN_HEADER = ("de", "en")  # what a reader requires; kind and source are optional
SENTIMENT_HEADER = ("label", "text")
SENTIMENT_ALL_HEADER = ("label", "text", "fold")
KINDS = ("sentence", "phrase", "word")
LABELS = ("negative", "positive")
MANIFEST = "manifest.json"


def raw_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return Path(data_dir) / "raw"


def processed_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return Path(data_dir) / "processed"


def translate_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return processed_dir(data_dir) / "translate"


def sentiment_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return processed_dir(data_dir) / "sentiment"


class DataError(Exception):
    """Any problem with sources or inputs; the CLI prints it as one line and exits non-zero."""


# --- text helpers ---------------------------------------------------------------------------------------------
_WS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")


def collapse_spaces(text: str) -> str:
    """Any whitespace run (tabs, line breaks) -> one space; none at either end."""
    return _WS.sub(" ", text).strip()


def clean_field(text: str) -> str:
    """A field as written to TSV: control characters dropped, any whitespace run (tabs, line breaks) -> one space."""
    return collapse_spaces(_CONTROL.sub(" ", text))


def normalize(text: str) -> str:
    """The key used for deduplication, leakage checks and split hashing: NFKC, lowercased, whitespace collapsed."""
    return collapse_spaces(unicodedata.normalize("NFKC", text).lower())


def stable_hash(text: str) -> int:
    """sha1 of the UTF-8 text as an integer: the same on every machine and Python process."""
    return int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:8], "big")


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- TSV I/O --------------------------------------------------------------------------------------------------
def tsv_text(header: Sequence[str], rows: Iterable[Mapping[str, object] | Sequence[object]]) -> str:
    out = io.StringIO()
    out.write("\t".join(header) + "\n")
    for row in rows:
        values = [row[k] for k in header] if isinstance(row, Mapping) else list(row)
        if len(values) != len(header):
            raise ValueError(f"row has {len(values)} fields, header {list(header)} has {len(header)}")
        out.write("\t".join(clean_field(str(v)) for v in values) + "\n")
    return out.getvalue()


def _atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_tsv(path: str | Path, header: Sequence[str], rows: Iterable[Mapping[str, object] | Sequence[object]]) -> None:
    """Write a header + rows (dicts keyed by header, or sequences) atomically (temp file + rename)."""
    _atomic_write_text(Path(path), tsv_text(header, rows))


def read_tsv(path: str | Path) -> list[dict[str, str]]:
    """Read a processed TSV back: one dict per row, keyed by the header."""
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
        raise DataError(f"{path} not found; run `python -m tx.data prepare` first") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None
    return rows


def read_split(task: str, split: str, data_dir: str | Path = DATA_DIR) -> list[dict[str, str]]:
    """`read_split("translate", "train")` -> rows of data/processed/translate/train.tsv."""
    folder = {"translate": translate_dir, "sentiment": sentiment_dir}[task](data_dir)
    return read_tsv(folder / f"{split}.tsv")


def write_outputs(out_dir: Path, files: dict[str, tuple[Sequence[str], list]], manifest: dict) -> None:
    """Render everything first, then rename each file into place (manifest last)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rendered = {name: tsv_text(header, rows) for name, (header, rows) in files.items()}
    rendered[MANIFEST] = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    for name, text in rendered.items():
        _atomic_write_text(out_dir / name, text)


FORMAT = {"delimiter": "\\t", "encoding": "utf-8", "quoting": "none (csv.QUOTE_NONE)",
           "fields": "no tabs or line breaks inside fields"}
SPLIT_HASH = "sha1 of the normalised text (NFKC, lowercased, whitespace collapsed)"

def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8-sig")
    except (OSError, EOFError) as e:
        raise DataError(f"{path}: cannot read ({e})") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None


def read_lines(path: Path) -> list[str]:
    """Split on "\\n" only (str.splitlines would also split on \\x0b, \\x1c, U+2028 and misalign files)."""
    lines = [ln.removesuffix("\r") for ln in read_text(path).split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines

