"""The tiny exports' cache key (tests/export_fixtures.py) hashes the files an export can import, and no fewer."""
import ast
import json

import pytest
from export_fixtures import CACHE, EXPORT_PACKAGES, KINDS, LOADED_MODULES, cache_key, export_sources, exported
from import_graph import REPO, module_name, reachable_files


def relative(paths) -> set[str]:
    return {path.relative_to(REPO).as_posix() for path in paths}


def test_the_key_hashes_the_model_and_the_export_and_leaves_out_what_no_export_imports():
    sources = relative(export_sources())
    assert {"tx/__init__.py", "tx/model.py", "tx/layers.py", "tx/tokenizer.py", "export/pipeline.py",
            "export/quantize.py", "runtime/cpu.py", "export/__main__.py"} <= sources  # the last: the shipped export
    assert not {"tx/attribution.py", "tx/trainer.py", "tx/tools/train.py",
                "runtime/experiments/patching.py"} & sources


def test_reachable_files_follow_imports_inside_functions_relative_ones_and_parent_packages(tmp_path):
    files = {"start.py": "import a.b\n",
             "a/__init__.py": "", "a/b.py": "def f():\n    from .c import g\n", "a/c.py": "from d import x\n",
             "a/unused.py": "", "d/__init__.py": "from .e import x\n", "d/e.py": "x = 1\n", "d/f.py": ""}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = {p.relative_to(tmp_path).as_posix() for p in reachable_files([tmp_path / "start.py"], ("a", "d"), tmp_path)}
    assert found == {"a/__init__.py", "a/b.py", "a/c.py", "d/__init__.py", "d/e.py"}


# a file in reach that imports by a computed name, and why no export takes that path
DYNAMIC_ALLOWED = {"runtime/cli.py": "dispatch() runs `python -m export triton|ct2|ops`, the commands, never an export"}


def test_no_file_in_reach_imports_by_a_name_built_at_run_time():
    """The key follows import statements only: a module imported by a computed name would escape it."""
    dynamic = []
    for path in (p for p in export_sources() if p.relative_to(REPO).as_posix() not in DYNAMIC_ALLOWED):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                    "import_module", "__import__"):
                dynamic.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not dynamic, f"imports by a run-time name in the export's reach (widen export_sources): {dynamic}"


@pytest.mark.exports
@pytest.mark.parametrize("kind", KINDS)
def test_each_background_export_loaded_only_modules_the_key_hashes(kind):
    exported(kind)
    loaded = set(json.loads((CACHE / cache_key() / kind / LOADED_MODULES).read_text(encoding="utf-8")))
    assert {"tx.model", "export.pipeline", "export.quantize"} <= loaded  # the record is of a real export
    hashed = {module_name(path) for path in export_sources()}
    assert {name.split(".")[0] for name in loaded} <= set(EXPORT_PACKAGES)
    assert loaded <= hashed, f"loaded by the export, missing from its cache key: {sorted(loaded - hashed)}"
