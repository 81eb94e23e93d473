"""onnxruntime-web, pinned: the npm tarball fetched once with urllib (npm may be missing), checked by sha256 and
cached under .cache/web/; only the wasm build's files are taken from it. Nothing is fetched when the page runs."""
from __future__ import annotations

import tarfile
import urllib.request
from pathlib import Path

from runtime.model_files import sha256_of

VERSION = "1.30.0"  # the release our graphs' opset 20 + com.microsoft ops run on (docs/web.md)
SHA256 = "d2228df7e4616bc3348bf504ee888f3bec43789a273f0a63f3e68d203ce3bf71"  # of the .tgz the registry serves
URL = f"https://registry.npmjs.org/onnxruntime-web/-/onnxruntime-web-{VERSION}.tgz"
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "web"
# The wasm build only (no WebGPU/WebGL): the ES-module API, the Emscripten loader it imports, and the binary
# (SIMD + threads; it runs on one thread where the page is not cross-origin isolated).
FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")


class PackageError(RuntimeError):
    """The tarball cannot be fetched or is not the pinned one (the message says what to do)."""


def tarball(cache: Path = CACHE, url: str = URL, sha256: str = SHA256, log=print) -> Path:
    """The pinned tarball: from the cache when its sha256 matches, else downloaded (and then checked)."""
    path = cache / url.rsplit("/", 1)[1]
    if path.is_file() and sha256_of(path) == sha256:
        return path
    cache.mkdir(parents=True, exist_ok=True)
    log(f"fetching {url}")
    partial = path.with_suffix(".part")
    try:
        with urllib.request.urlopen(url, timeout=120) as response, open(partial, "wb") as f:
            while block := response.read(1 << 20):
                f.write(block)
    except OSError as e:
        partial.unlink(missing_ok=True)
        raise PackageError(f"cannot fetch onnxruntime-web {VERSION} from the npm registry ({e}); put the tarball "
                           f"at {path} by hand (sha256 {sha256})") from e
    fetched = sha256_of(partial)
    if fetched != sha256:
        partial.unlink()
        raise PackageError(f"{url} has sha256 {fetched}, not the pinned {sha256}: refusing to use it")
    partial.rename(path)
    return path


def extract(archive: Path, dest: Path, names: tuple[str, ...] = FILES) -> list[Path]:
    """Copy package/dist/<name> of each name out of the tarball into dest; their paths."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    with tarfile.open(archive, "r:gz") as tar:
        for name in names:
            member = tar.extractfile(f"package/dist/{name}")
            if member is None:
                raise PackageError(f"{archive} has no package/dist/{name}")
            (dest / name).write_bytes(member.read())
            written.append(dest / name)
    return written
