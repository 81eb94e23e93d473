"""Read files out of Debian packages (.deb = an `ar` archive holding data.tar.*) without dpkg or root."""
from __future__ import annotations

import fnmatch
import io
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

from .io import DataError


def _data_tar(deb: Path) -> tuple[str, bytes]:
    """(member name, uncompressed-or-compressed tar bytes) of the package's data.tar.*."""
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
        return name, body
    raise DataError(f"{deb}: no data.tar member")


def iter_deb_files(deb: str | Path, pattern: str = "*") -> Iterator[tuple[str, bytes]]:
    """(path without leading "./", content) of every regular file in the package whose path matches the
    fnmatch `pattern` ("usr/share/doc/*/*.html"), in archive order."""
    deb = Path(deb)
    name, body = _data_tar(deb)
    try:
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:*") as tar:
            for info in tar:
                path = info.name.lstrip("./") if info.name.startswith("./") else info.name
                if info.isfile() and fnmatch.fnmatchcase(path, pattern):
                    yield path, tar.extractfile(info).read()
    except (tarfile.TarError, EOFError, OSError) as e:
        raise DataError(f"{deb}: cannot read {name}: {e}") from None


def read_deb_member(deb: str | Path, member: str) -> bytes:
    """One file out of a .deb (an `ar` archive holding data.tar.{xz,gz,bz2,zst}) without dpkg."""
    for path, content in iter_deb_files(deb, member):
        if path == member:
            return content
    raise DataError(f"{deb}: {member} not found in the package")
