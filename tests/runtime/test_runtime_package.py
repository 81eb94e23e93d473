"""The runtime package stands alone: it imports only numpy, onnxruntime, tokenizers and the standard library,
and the one-node graphs it ships are exactly what `export.ops` builds."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from export import ops

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
ALLOWED = {"numpy", "onnxruntime", "tokenizers", "runtime"}


def imported_top_levels(path: Path) -> set[str]:
    """Top-level names of every absolute import in a file, at any depth (imports inside functions count too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(RUNTIME.rglob("*.py")), ids=lambda p: str(p.relative_to(RUNTIME)))
def test_runtime_modules_import_only_numpy_onnxruntime_tokenizers_and_the_standard_library(path):
    foreign = imported_top_levels(path) - ALLOWED - set(sys.stdlib_module_names) - {"__future__"}
    assert not foreign, f"{path.name} imports {sorted(foreign)}: the runtime must install without them"


def test_the_import_check_sees_a_forbidden_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import numpy\n\ndef f():\n    from torch import nn\n    import tx.model\n", encoding="utf-8")
    assert imported_top_levels(module) - ALLOWED - set(sys.stdlib_module_names) == {"torch", "tx"}


@pytest.mark.parametrize("name", sorted(ops.BUILDERS))
def test_the_shipped_one_node_graphs_are_what_export_ops_builds(name):
    shipped = ops.OPS_DIR / name
    assert shipped.is_file(), f"{shipped} missing: run python -m export ops"
    assert shipped.read_bytes() == ops.BUILDERS[name](), f"{shipped} is stale: run python -m export ops"
