"""Each page feature's pure modules (runtime results in, words, tables and figures out) import neither Streamlit nor
PyTorch nor `tx`: that is what lets them be tested without a page, and what keeps the app torch-free.

One subprocess imports them all, one by one, and names the first that brought a forbidden package in (a subprocess
per module cost about 1.5 s of CPU each).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("streamlit", "torch", "tx")

# The pure part of every feature package: each module here must stay importable without the forbidden packages.
PURE = {
    "attention": ["maps"],
    "decoding": ["figures", "link", "numbers", "run"],
    "experiments": ["checks", "classifier", "compare", "figures", "link", "report", "views"],
    "latency": ["measure", "report"],
    "model_card": ["card_text", "export_report", "sentiment_files", "weights"],
    "sentiment": ["batch", "negation", "notes"],
    "serving": ["client"],
    "training": ["figures", "files", "processes", "runs"],
    "translate": ["calibration_tables", "cross", "settings", "steering", "verdicts"],
    "walkthrough": ["figures", "steps", "tensors"],
}

# The shared modules the pure ones read.
SHARED = ["inputs", "model_paths", "figures"]

CHECK = """
import importlib, json, sys
found = {}
for name in sys.argv[1:]:
    importlib.import_module(name)
    loaded = sorted({m.split(".")[0] for m in sys.modules} & set(FORBIDDEN))
    if loaded:
        found[name] = loaded
        break  # what the next ones import can no longer be told apart
print(json.dumps(found))
"""


def test_every_feature_package_has_its_pure_modules_listed():
    packages = sorted(p.name for p in (ROOT / "playground").iterdir() if (p / "__init__.py").exists())
    assert sorted(PURE) == packages
    for package, modules in PURE.items():
        for module in modules:
            assert (ROOT / "playground" / package / f"{module}.py").exists(), f"playground/{package}/{module}.py"


def test_the_pure_modules_import_no_streamlit_torch_or_tx():
    names = [f"playground.{package}.{module}" for package, modules in PURE.items() for module in modules]
    names += [f"playground.{module}" for module in SHARED]
    done = subprocess.run([sys.executable, "-c", f"FORBIDDEN = {FORBIDDEN!r}\n{CHECK}", *names], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {}, f"{done.stdout.strip()}: the first module that imported them"
