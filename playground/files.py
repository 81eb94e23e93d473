"""A model directory's side files (metrics, calibration, baselines, benchmark results): a missing or broken file reads
as None, and the page leaves that part out instead of failing."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
