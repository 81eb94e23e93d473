"""The packages import each other only one way (README, Layout): runtime <- tx <- export, runtime <- the app.
A cycle or a back edge (the runtime reaching into tx, tx into export, the library into its tools) fails here."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROJECT = {"runtime", "tx", "export", "playground", "gpujob"}
# package -> the project packages its modules may import (pages/ and app.py count as the app)
ALLOWED = {
    "runtime": set(),
    "tx": {"runtime"},
    "export": {"runtime", "tx"},
    "gpujob": {"runtime", "tx"},
    "playground": {"runtime"},
    "app": {"runtime", "playground"},
}


def imports_of(path: Path) -> set[str]:
    """Dotted names of every absolute import in a file (inside functions too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


def files_of(package: str) -> list[Path]:
    if package == "app":
        return [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]
    return sorted((REPO / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_packages_import_only_the_layers_below(package):
    wrong = {}
    for path in files_of(package):
        used = {name.split(".")[0] for name in imports_of(path)} & PROJECT
        if package == "app" and path.name.startswith("4_Latency"):
            used -= {"tx"}  # its PyTorch column, imported inside a function where torch is installed
        extra = used - ALLOWED[package] - {package}
        if extra:
            wrong[str(path.relative_to(REPO))] = sorted(extra)
    assert not wrong, f"imports against the layering: {wrong}"


def test_the_library_does_not_import_its_tools():
    """Only the tools themselves and `python -m tx` (tx/__main__.py, their entry) may import tx.tools."""
    library = [p for p in files_of("tx") if "tools" not in p.parts and p.name != "__main__.py"]
    wrong = [str(p.relative_to(REPO)) for p in library if any(name.startswith("tx.tools") for name in imports_of(p))]
    relative = [str(p.relative_to(REPO)) for p in library
                if any(isinstance(n, ast.ImportFrom) and n.level and (n.module or "").startswith("tools")
                       for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert not wrong + relative, f"library modules importing tx.tools: {wrong + relative}"


def test_the_check_sees_a_back_edge(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import numpy\n\ndef f():\n    from export.bench import table\n", encoding="utf-8")
    assert {name.split(".")[0] for name in imports_of(module)} & PROJECT == {"export"}
