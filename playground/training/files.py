"""A browser session's training files: a temporary folder of its own (uploads under fixed names, one folder per run),
deleted with the session or at the server's exit, and what the page offers from a run's model directory (the
Try-it box's first input, the downloads)."""
from __future__ import annotations

import io
import shutil
import tempfile
import uuid
import weakref
import zipfile
from pathlib import Path

from runtime import providers
from runtime.toy import read_held_out

UPLOAD_NAMES = {"tsv": "upload.tsv", "csv": "upload.csv", "txt": "upload.tsv"}  # never the uploader's own name


def remove_folder(folder: str) -> None:
    """A session's folder and, with it, runtime's shared onnxruntime sessions of its files: runtime keeps every
    session for the life of the process (right for the shipped models), a toy model's are dead weight once it goes."""
    providers.clear_sessions(under=folder)
    shutil.rmtree(folder, ignore_errors=True)


class SessionFiles:
    """A temporary folder for one browser session; deleted when the session object is collected (the session
    ended) or the server exits."""

    def __init__(self):
        self.id = uuid.uuid4().hex
        self.root = Path(tempfile.mkdtemp(prefix="tx-train-"))
        self._cleanup = weakref.finalize(self, remove_folder, str(self.root))
        self.counter = 0

    def new_run_dir(self) -> Path:
        self.counter += 1
        path = self.root / f"run-{self.counter}"
        path.mkdir()
        return path

    def forget(self, run_dir: str | Path) -> None:
        path = Path(run_dir).resolve()
        if path.parent == self.root.resolve():
            remove_folder(str(path))

    def remove(self) -> None:
        self._cleanup()


def save_upload(files: SessionFiles, name: str, raw: bytes) -> Path:
    """The upload under a fixed name in the session's folder (its own name is never used as a path)."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else "tsv"
    path = files.root / UPLOAD_NAMES.get(suffix, "upload.tsv")
    path.write_bytes(raw)
    return path


def model_zip(model_dir: Path) -> bytes:
    """The model directory as a zip, paths relative to it (what `python -m export` and OnnxTranslator read)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(model_dir.rglob("*")):
            if path.is_file():
                z.write(path, Path("model") / path.relative_to(model_dir))
    return buffer.getvalue()


def held_out_first(model_dir: Path) -> str:
    """The first held-out source (runtime.toy.HELD_OUT_FILE): the Try-it box's first input, never trained on."""
    held = read_held_out(model_dir)
    return held[0][0] if held else ""


def onnx_files(model_dir: Path) -> list[Path]:
    return sorted((model_dir / "onnx").glob("*.onnx"))
