"""Tiny registry packages built in tmp_path, so the real package-reading paths run offline in tests."""
from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from pathlib import Path


def _tar_bytes(files: dict[str, bytes], compression: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=f"w:{compression}") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


def make_deb(path: Path, files: dict[str, bytes | str], package: str = "fake", compression: str = "xz") -> Path:
    """A minimal .deb: the ar archive of debian-binary, control.tar.xz and data.tar.<compression> holding
    `files` ({"usr/share/...": content}) under "./", as dpkg-deb builds them."""
    data = {f"./{name}": (c.encode() if isinstance(c, str) else c) for name, c in files.items()}
    members = [("debian-binary", b"2.0\n"),
               ("control.tar.xz", _tar_bytes({"./control": f"Package: {package}\n".encode()}, "xz")),
               (f"data.tar.{compression}", _tar_bytes(data, compression))]
    out = bytearray(b"!<arch>\n")
    for name, body in members:
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n".encode()
        out += body + (b"\n" if len(body) % 2 else b"")
    path.write_bytes(bytes(out))
    return path


def make_wheel(path: Path, files: dict[str, bytes | str]) -> Path:
    """A wheel is a zip: `files` ({"pkg/locale/de/LC_MESSAGES/x.po": content}) written into one."""
    with zipfile.ZipFile(path, "w") as z:
        for name, content in files.items():
            z.writestr(name, content)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
