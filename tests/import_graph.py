"""The project's import graph, read from the source (never by importing it): the layering tests check it, and the
tiny exports' cache key hashes only the files an export can import (tests/export_fixtures.py)."""
from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def syntax_tree(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once a process for each version of the file: the layering checks each walk
    every project file (read it, never change it)."""
    stat = path.stat()
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _parsed(path: Path, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def module_name(path: Path, root: Path = REPO) -> str:
    """tx/tools/train.py -> tx.tools.train; tx/__init__.py -> tx (relative to `root`, the repository's)."""
    parts = path.resolve().relative_to(root.resolve()).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolved_imports(path: Path, modules: set[str] | None = None, root: Path = REPO) -> set[str]:
    """Dotted names of every import in a file (inside functions too), relative ones resolved. `from a import b`: a.b
    where that is one of `modules`, else a; without `modules`, both."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    names = set()
    for node in ast.walk(syntax_tree(path)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])]) \
                if node.level else node.module
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                names |= {sub, base} if modules is None else {sub if sub in modules else base}
    return names


def package_modules(packages: Iterable[str], root: Path = REPO) -> dict[str, Path]:
    """Every module of the named top-level packages -> its file."""
    return {module_name(p, root): p for package in packages for p in sorted((root / package).rglob("*.py"))}


def reachable_files(starts: Iterable[Path], packages: Iterable[str], root: Path = REPO) -> list[Path]:
    """The files of `packages` that any of `starts` can import, directly or through others: every import statement
    followed (inside functions too), and importing a.b.c runs a/__init__.py and a/b/__init__.py first. Imports by a
    name built at run time (importlib.import_module) are not seen: tests/test_export_fixtures.py checks none is in
    reach."""
    modules = package_modules(packages, root)
    seen: set[str] = set()
    todo = [m for start in starts for m in resolved_imports(start, set(modules), root) if m in modules]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in modules]
        todo += [m for m in resolved_imports(modules[name], set(modules), root) if m in modules]
    return sorted(modules[name] for name in seen)
