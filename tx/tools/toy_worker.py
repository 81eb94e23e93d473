"""The Train-your-own page's child process (the library code is tx.toy.worker): it trains a toy model into a run
folder, or checks an exported one under onnxruntime. The page starts it; a person rarely does.

    python -m tx toy_worker warm                  (waits on stdin for {"spec", "run_dir", "log"}: the page's spare)
    python -m tx toy_worker train SPEC.json RUN_DIR
    python -m tx toy_worker serve MODEL_DIR [THREADS]
"""
from __future__ import annotations

from ..toy.worker import main

__all__ = ["main"]
