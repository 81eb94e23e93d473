"""The packages import each other only one way (docs/architecture.md): runtime <- corpus, runtime <- tx <- export,
runtime <- playground <- the app; bench may import anything. A back edge (the runtime reaching into tx, tx into
export), a library importing a command-line module, a project file run by its path, or an import cycle fails here."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_graph import module_name, resolved_imports, syntax_tree

REPO = Path(__file__).resolve().parents[1]
PROJECT = {"runtime", "corpus", "tx", "export", "playground", "gpujob", "bench", "serve", "web"}
# package -> the project packages its modules may import (pages/ and app.py count as the app)
ALLOWED = {
    "runtime": set(),
    "corpus": {"runtime"},
    "tx": {"runtime"},
    "export": {"runtime", "tx"},
    "gpujob": {"runtime", "tx"},
    "playground": {"runtime"},
    "serve": {"runtime"},  # the service over the inference API; the playground reaches it over HTTP only
    # the static folder's builder: the app's limits and words from their modules, its int8 graphs by export's quantiser
    "web": {"runtime", "playground", "export"},
    "app": {"runtime", "playground"},
    "bench": PROJECT,  # a benchmark measures whatever it names; nothing imports a benchmark (see below)
}

RUN_BY_PATH_ALLOWED: set[str] = set()  # none: every child process starts as a module

LIBRARY_IMPORTING_CLI_ALLOWED: set[str] = set()  # none


def imports_of(path: Path) -> set[str]:
    """Dotted names of every absolute import in a file (inside functions too)."""
    names = set()
    for node in ast.walk(syntax_tree(path)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


def files_of(package: str) -> list[Path]:
    if package == "app":
        return [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]
    return sorted((REPO / package).rglob("*.py"))


def is_command_line(module: str) -> bool:
    """A command-line module: a tool of tx or gpujob, any package's __main__ or cli, a benchmark."""
    parts = module.split(".")
    return (parts[:2] in (["tx", "tools"], ["gpujob", "tools"]) or parts[-1] in ("__main__", "cli")
            or parts[0] == "bench")


def project_files() -> list[Path]:
    return [path for package in [*sorted(PROJECT), "app"] for path in files_of(package)]


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_packages_import_only_the_layers_below(package):
    wrong = {}
    for path in files_of(package):
        used = {name.split(".")[0] for name in imports_of(path)} & PROJECT
        if path.relative_to(REPO).as_posix() in ("playground/latency/pytorch.py",
                                                 "playground/experiments/attribution_torch.py"):
            used -= {"tx"}  # the Latency page's PyTorch column and the Experiments page's gradient attribution,
            # imported inside functions where torch is installed
        extra = used - ALLOWED[package] - {package}
        if extra:
            wrong[str(path.relative_to(REPO))] = sorted(extra)
    assert not wrong, f"imports against the layering: {wrong}"


def library_modules_importing_command_line(paths: list[Path]) -> dict[str, list[str]]:
    wrong = {}
    for path in paths:
        if is_command_line(module_name(path, REPO)) or str(path.relative_to(REPO)) in LIBRARY_IMPORTING_CLI_ALLOWED:
            continue  # a command may import another's dispatcher (gpujob's __main__ uses runtime.cli)
        found = sorted(name for name in resolved_imports(path, root=REPO) if is_command_line(name))
        if found:
            wrong[str(path.relative_to(REPO))] = found
    return wrong


def test_no_library_module_imports_a_command_line_module():
    """tx/tools/*, gpujob/tools/*, every __main__ and cli module, bench/: what they do lives in the library, so a
    library module never needs them (gpujob called `tx.tools.train.make_config`; now `tx.run_setup`'s)."""
    wrong = library_modules_importing_command_line(project_files())
    assert not wrong, f"library modules importing command-line modules: {wrong}"


def test_the_command_line_check_sees_a_library_importing_a_tool(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    for name, text in {"tx/run_setup.py": "from .tools.train import make_config\n",
                       "gpujob/plan.py": "def f():\n    from tx.tools import evaluate\n",
                       "export/quantize.py": "from . import __main__\n",
                       "tx/tools/ship.py": "from .evaluate import main\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = library_modules_importing_command_line(sorted(tmp_path.rglob("*.py")))
    assert set(found) == {"tx/run_setup.py", "gpujob/plan.py", "export/quantize.py"}  # a tool may import a tool


def run_by_path(path: Path) -> list[str]:
    """The project .py files a module names by path: a string like "tx/toy/userdata.py", or a path built with `/`
    from such parts (ROOT / "tx" / "toy" / "userdata.py"), what a subprocess or runpy would run."""
    def parts(node: ast.AST) -> list[str]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return parts(node.left) + parts(node.right)
        return node.value.split("/") if isinstance(node, ast.Constant) and isinstance(node.value, str) else []

    tree = syntax_tree(path)
    inner = {id(n.left) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)}
    found = []
    for node in ast.walk(tree):
        if id(node) in inner or not isinstance(node, ast.BinOp | ast.Constant):
            continue
        named = [p for p in parts(node) if p not in ("", ".")]
        if len(named) >= 2 and named[-1].endswith(".py") and named[0] in PROJECT and " " not in "".join(named):
            found.append("/".join(named))
    return found


def test_no_project_file_is_run_by_its_path():
    """Every command runs as a module (`python -m tx ...`, `-m tx toy_worker`), never as a file: a file run by its
    path escapes the import rules (the app once ran tx/toy/userdata.py to avoid importing tx)."""
    wrong = {str(p.relative_to(REPO)): run_by_path(p) for p in project_files()}
    wrong = {name: found for name, found in wrong.items() if found and name not in RUN_BY_PATH_ALLOWED}
    assert not wrong, f"project files run by their path: {wrong}"


def test_the_run_by_path_check_sees_both_spellings(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Docs may name tx/toy/userdata.py."""\nimport subprocess, sys\nROOT = None\n'
                      'A = ROOT / "tx" / "toy" / "userdata.py"\nsubprocess.run([sys.executable, "export/ops.py"])\n'
                      'B = ROOT / "tx" / "evalsets" / "bench_de.txt"\nC = [sys.executable, "-m", "tx", "toy_worker"]\n',
                      encoding="utf-8")
    assert run_by_path(module) == ["tx/toy/userdata.py", "export/ops.py"]


def import_graph() -> dict[str, set[str]]:
    """Every project module -> the project modules it imports (a package's __init__ counts as the package)."""
    modules = {module_name(p, REPO): p for p in project_files() if p.parent != REPO and p.parent.name != "pages"}
    return {name: {m for m in resolved_imports(path, set(modules), REPO) if m in modules and m != name}
            for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): each holds an import cycle."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_between_modules():
    """export/wrappers.py <-> export/fused_graphs.py was one (export/graph_modules.py now joins them)."""
    assert not cycles(import_graph())


def test_the_cycle_check_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_check_sees_a_back_edge(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import numpy\n\ndef f():\n    from export.report import read_report\n", encoding="utf-8")
    assert {name.split(".")[0] for name in imports_of(module)} & PROJECT == {"export"}


MAIN_BLOCK_ALLOWED: set[str] = set()  # none: a package's __main__.py is its one way in


def has_main_block(path: Path) -> bool:
    tests = [ast.unparse(node.test) for node in syntax_tree(path).body
             if isinstance(node, ast.If)]
    return any("__name__" in test and "__main__" in test for test in tests)


def test_every_command_runs_through_its_package_dispatcher():
    """One way in: `python -m tx|export|gpujob|bench|corpus ...` (each package's __main__.py); no other module
    holds an `if __name__ == "__main__"` entry of its own."""
    wrong = [str(p.relative_to(REPO)) for p in project_files() if p.name != "__main__.py" and has_main_block(p)]
    assert sorted(set(wrong) - MAIN_BLOCK_ALLOWED) == []


def test_the_entry_check_sees_a_main_block(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('import sys\n\nif __name__ == "__main__":\n    sys.exit(0)\n', encoding="utf-8")
    assert has_main_block(module)
    module.write_text("import sys\n", encoding="utf-8")
    assert not has_main_block(module)
