"""What a translation's confidence means for a model: the threshold measured on its hand-judged outputs.

`confidence.json` in a model directory is written by the measuring tool (`python -m tx confidence`);
the runtime only reads it.
"""
from __future__ import annotations

import json
from pathlib import Path

CONFIDENCE_FILE = "confidence.json"


def read_threshold(model_dir: str | Path) -> float | None:
    """The measured low-confidence threshold of a model directory, or None when it has none."""
    path = Path(model_dir) / CONFIDENCE_FILE
    try:
        return float(json.loads(path.read_text(encoding="utf-8"))["threshold"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
