"""The prepared translation corpus packed for the GPU machine, and read back there.

What the job needs and nothing more: the training pairs after the run's own filtering and mix (applied here, with the
run's seed, exactly as `tx.tasks.TranslateTask` applies them), already tokenised with the joint BPE vocabulary learned
here by the project's `train_tokenizer` on those pairs, as uint16 ids; the tokenizer; the valid sets the runs select
on (Ding valid, docs valid; the everyday set is tracked in tx/evalsets and travels anyway); and the corpus manifest.
The test sets stay here: they are scored after the job, never seen by it.

Layout of the archive (one xz-compressed tar, then cut into pieces by `gpujob.pieces`):
pack.json (settings and counts), tokenizer.json, train.npz (de_ids, de_offsets, en_ids, en_offsets),
valid.tsv, docs_valid.tsv, data_manifest.json.
"""
from __future__ import annotations

import io
import json
import lzma
import tarfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from runtime.tsv import MANIFEST, TRANSLATE_HEADER, DataError, read_tsv, tsv_text
from tx.tasks.mix import mix_rows, parse_mix
from tx.tokenizer import Tokenizer, train_tokenizer

PACK_FORMAT = 1
PACK_FILE, TOKENIZER, TRAIN, DATA_MANIFEST = "pack.json", "tokenizer.json", "train.npz", "data_manifest.json"
VALID_SETS = ("valid", "docs_valid")  # what the runs select on; test sets never travel
ID_DTYPE = np.uint16  # a 16k vocabulary fits; checked when packing


@dataclass(frozen=True)
class PackSettings:
    """The data settings every planned run must share, since they share one pack."""

    data_dir: str  # the prepared corpus (train.tsv, valid.tsv, docs_valid.tsv, manifest.json)
    vocab_size: int  # joint BPE vocabulary size asked for (model.vocab_size)
    mix: str  # the run's source weights (tx.tasks.mix), applied here
    seed: int  # the run's seed: the mix's draw is the one the run itself would make
    use_phrases: bool  # keep phrase and word pairs (TranslateConfig.use_phrases)

    @classmethod
    def of(cls, config: Any) -> PackSettings:
        """From a TranslateConfig."""
        return cls(config.data_dir, config.model.vocab_size, config.mix, config.seed, config.use_phrases)

    def differences(self, other: PackSettings) -> list[str]:
        """Fields (data_dir aside: the pack replaces it) where two settings disagree, as 'name: a != b'."""
        a, b = asdict(self), asdict(other)
        return [f"{k}: {a[k]!r} != {b[k]!r}" for k in a if k != "data_dir" and a[k] != b[k]]


def flat_ids(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Ragged id lists -> (all ids one after another, offsets with offsets[i]:offsets[i+1] = row i)."""
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    ids = np.fromiter((i for r in rows for i in r), dtype=ID_DTYPE, count=int(offsets[-1]))
    return ids, offsets


def _tar_add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime = len(data), 0  # mtime 0: the same corpus packs to the same bytes
    tar.addfile(info, io.BytesIO(data))


def pack_corpus(settings: PackSettings, out_file: Path, log=print) -> dict[str, Any]:
    """Write the archive to out_file; returns pack.json's content."""
    data = Path(settings.data_dir)
    started = time.monotonic()
    train = read_tsv(data / "train.tsv")
    if not settings.use_phrases:
        train = [r for r in train if r.get("kind", "sentence") == "sentence"]
    mixed = mix_rows(train, parse_mix(settings.mix), settings.seed)
    log(f"pack: {len(train):,} train pairs, {len(mixed):,} after the mix; learning a {settings.vocab_size:,} "
        "vocabulary")
    tokenizer = train_tokenizer((r[c] for r in mixed for c in ("de", "en")), vocab_size=settings.vocab_size)
    if tokenizer.vocab_size > np.iinfo(ID_DTYPE).max + 1:
        raise ValueError(f"vocabulary of {tokenizer.vocab_size} does not fit {np.dtype(ID_DTYPE).name} ids")
    arrays = {}
    for lang in ("de", "en"):
        arrays[f"{lang}_ids"], arrays[f"{lang}_offsets"] = flat_ids(tokenizer.encode_batch([r[lang] for r in mixed]))
    log(f"pack: tokenised {int(arrays['de_offsets'][-1] + arrays['en_offsets'][-1]):,} tokens "
        f"({time.monotonic() - started:.0f} s so far)")
    npz = io.BytesIO()
    np.savez(npz, **arrays)  # uncompressed inside: the archive's xz compresses everything once
    sets = {name: read_tsv(data / f"{name}.tsv") for name in VALID_SETS if (data / f"{name}.tsv").is_file()}
    if "valid" not in sets:
        raise DataError(f"{data / 'valid.tsv'} not found; run `make data` first")
    manifest_path = data / MANIFEST
    info = {"format": PACK_FORMAT, "settings": asdict(settings), "train_rows": len(train), "mixed_rows": len(mixed),
            "vocab_size": tokenizer.vocab_size, "tokens": {lang: int(arrays[f"{lang}_offsets"][-1])
                                                          for lang in ("de", "en")},
            "sets": {name: len(rows) for name, rows in sets.items()}}
    out_file.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_file.with_name(out_file.name + ".partial")
    with lzma.open(tmp, "wb", preset=6) as xz, tarfile.open(fileobj=xz, mode="w") as tar:
        _tar_add(tar, PACK_FILE, json.dumps(info, indent=2).encode())
        _tar_add(tar, TOKENIZER, tokenizer.to_str().encode())
        _tar_add(tar, TRAIN, npz.getvalue())
        for name, rows in sets.items():
            _tar_add(tar, f"{name}.tsv", tsv_text(TRANSLATE_HEADER, [{**{"kind": "", "source": ""}, **r}
                                                                      for r in rows]).encode())
        _tar_add(tar, DATA_MANIFEST, manifest_path.read_bytes() if manifest_path.is_file() else b"{}")
    tmp.replace(out_file)
    log(f"pack: {out_file} {out_file.stat().st_size / 2**20:.1f} MiB in {time.monotonic() - started:.0f} s")
    return info


def unpack_corpus(archive: Path, out_dir: Path) -> Path:
    """Extract the archive into out_dir (its members only, nothing outside it); returns out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with lzma.open(archive, "rb") as xz, tarfile.open(fileobj=xz, mode="r") as tar:
        for member in tar:
            if not member.isfile() or "/" in member.name or member.name.startswith("."):
                raise DataError(f"{archive}: unexpected member {member.name!r}")
            (out_dir / member.name).write_bytes(tar.extractfile(member).read())
    return out_dir


class PackedPairs:
    """The packed training pairs: row i's token ids per language, without re-tokenising."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.arrays = arrays

    def __len__(self) -> int:
        return len(self.arrays["de_offsets"]) - 1

    def ids(self, lang: str) -> list[list[int]]:
        """Every row's ids in `lang`, as the lists `Tokenizer.encode_batch` would have given."""
        flat, offsets = self.arrays[f"{lang}_ids"].tolist(), self.arrays[f"{lang}_offsets"].tolist()
        return [flat[a:b] for a, b in zip(offsets[:-1], offsets[1:], strict=True)]  # list slices: no numpy per row


@dataclass
class PackedCorpus:
    """An unpacked corpus folder, read."""

    info: dict[str, Any]  # pack.json
    tokenizer: Tokenizer  # the vocabulary learned when packing
    train: PackedPairs  # the mixed, tokenised training pairs
    sets: dict[str, list[dict[str, str]]]  # valid set name -> rows (de, en, ...)

    @classmethod
    def read(cls, folder: Path) -> PackedCorpus:
        folder = Path(folder)
        if not (folder / PACK_FILE).is_file():
            raise DataError(f"{folder}: not an unpacked corpus (no {PACK_FILE}); `python -m gpujob pack` makes one")
        info = json.loads((folder / PACK_FILE).read_text())
        if info.get("format") != PACK_FORMAT:
            raise DataError(f"{folder}: pack format {info.get('format')}, this code reads {PACK_FORMAT}")
        with np.load(folder / TRAIN) as npz:
            arrays = {k: npz[k] for k in npz.files}
        sets = {name: read_tsv(folder / f"{name}.tsv") for name in VALID_SETS if (folder / f"{name}.tsv").is_file()}
        return cls(info, Tokenizer.load(folder / TOKENIZER), PackedPairs(arrays), sets)

    def settings(self) -> PackSettings:
        return PackSettings(**self.info["settings"])
