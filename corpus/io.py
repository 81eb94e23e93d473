"""What every corpus module shares: paths, text keys, hashes, the processed outputs, reading raw files.

Standard library and `runtime` (the shared TSV format and the atomic write) only: no torch, no tx.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from runtime.files import atomic_write_bytes
from runtime.tsv import (
    FORMAT,
    KINDS,
    LABELS,
    MANIFEST,
    SENTIMENT_ALL_HEADER,
    SENTIMENT_HEADER,
    TRANSLATE_HEADER,
    TRANSLATE_MIN_HEADER,
    DataError,
    clean_field,
    collapse_spaces,
    read_tsv,
    tsv_text,
    write_text,
    write_tsv,
)

__all__ = ["DATA_DIR", "EVALSETS", "FORMAT", "KINDS", "LABELS", "MANIFEST", "SENTIMENT_ALL_HEADER",
           "SENTIMENT_HEADER", "SPLITS", "SPLIT_HASH", "TRANSLATE_HEADER", "TRANSLATE_MIN_HEADER", "DataError",
           "atomic_write_bytes", "clean_field", "collapse_spaces", "normalize", "now", "processed_dir", "raw_dir",
           "read_lines", "read_split", "read_text", "read_tsv", "sentiment_dir", "sha256_file", "stable_hash",
           "translate_dir", "tsv_text", "write_outputs", "write_tsv"]

# --- paths ----------------------------------------------------------------------------------------------------
DATA_DIR = Path("data")
SPLITS = ("train", "valid", "test")
# The hand-written evaluation sets training scores on (tx/evalsets/, files beside this package, not an import):
# the corpus keeps their texts out of everything it trains on.
EVALSETS = Path(__file__).resolve().parents[1] / "tx" / "evalsets"


def raw_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return Path(data_dir) / "raw"


def processed_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return Path(data_dir) / "processed"


def translate_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return processed_dir(data_dir) / "translate"


def sentiment_dir(data_dir: str | Path = DATA_DIR) -> Path:
    return processed_dir(data_dir) / "sentiment"


# --- text keys ------------------------------------------------------------------------------------------------
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
        write_text(out_dir / name, text)


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

