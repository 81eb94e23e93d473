"""A wheel made smaller for the trip: rewritten as a stored (uncompressed) zip, then xz-compressed whole, and back.

Why: onnxruntime-gpu's wheel is 244 MiB, 221 of them one deflated library (libonnxruntime_providers_cuda.so, 271 MB)
whose repeats lie further apart than deflate's 32 KiB window; xz's 8 MiB dictionary finds them (on 8 MiB samples of
that library: 0.07-0.99 of the raw size where deflate gives 0.2-1.0). The GPU machine gets the .whl.xz in pieces,
decompresses it to the stored wheel (a valid wheel: the same files, the same RECORD) and pip installs that.
"""
from __future__ import annotations

import lzma
import shutil
import zipfile
from pathlib import Path

SUFFIX = ".xz"
BLOCK = 1 << 20


def repack_wheel(wheel: Path, out_dir: Path, preset: int = 6) -> Path:
    """out_dir/<wheel name>.xz: the wheel's members, in order, stored, xz-compressed (deterministic)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stored = out_dir / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            copy = zipfile.ZipInfo(info.filename, info.date_time)
            copy.external_attr, copy.compress_type = info.external_attr, zipfile.ZIP_STORED
            with src.open(info) as data, dst.open(copy, "w", force_zip64=info.file_size > 2**31) as target:
                shutil.copyfileobj(data, target, BLOCK)
    packed = out_dir / (wheel.name + SUFFIX)
    with open(stored, "rb") as f, lzma.open(packed, "wb", preset=preset) as xz:
        shutil.copyfileobj(f, xz, BLOCK)
    stored.unlink()
    return packed


def unpacked_name(name: str) -> str:
    """The wheel's own file name (pip reads its tags from it) for a carried whole's name."""
    return name[:-len(SUFFIX)] if name.endswith(SUFFIX) else name


def unpack_wheel(packed: Path, out_dir: Path) -> Path:
    """The installable wheel for a carried whole: decompressed when it is a .whl.xz, else the file itself."""
    if not packed.name.endswith(SUFFIX):
        return packed
    out = out_dir / unpacked_name(packed.name)
    with lzma.open(packed, "rb") as xz, open(out, "wb") as f:
        shutil.copyfileobj(xz, f, BLOCK)
    with zipfile.ZipFile(out) as z:  # a damaged stream would fail above (xz checks its CRC); this checks the zip
        bad = z.testzip()
    if bad is not None:
        raise ValueError(f"{out.name}: member {bad} is damaged")
    return out
