"""What the web tests and the web benchmark share: the static folder built from a model directory, served by
`python -m web serve` on 127.0.0.1 (web/local.py; cross-origin isolated where a test asks). onnxruntime-web's
tarball comes from .cache/web/ (`make web` fetched it); where it is not cached and the npm registry does not
answer, a test is skipped."""
from __future__ import annotations

from pathlib import Path

import pytest

from web import ort_package
from web.build import BuildOptions, build
from web.local import static_server

__all__ = ["built_folder", "static_server"]


def built_folder(model_dir: Path, out: Path) -> Path:
    """The folder built from model_dir into out, int8 and fp32 (gzip level 1: the test's bytes, not the size)."""
    try:
        ort_package.tarball(log=lambda _: None)
    except ort_package.PackageError as e:
        pytest.skip(f"onnxruntime-web is not cached and the npm registry does not answer: {e}")
    build(BuildOptions(model_dir=model_dir, out=out, compresslevel=1, log=lambda _: None))
    return out
