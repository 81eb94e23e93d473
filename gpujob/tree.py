"""What the device tool sends with every call: the checkout's tracked files and its untracked files that git does
not ignore (device README), measured as git lists them, here.
"""
from __future__ import annotations

import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def listed(root: Path, *args: str) -> list[str]:
    """Paths git lists (NUL-separated output), relative to root."""
    return [p for p in git(root, "ls-files", "-z", *args).split("\0") if p]


def tracked(root: Path) -> list[str]:
    return listed(root, "--cached")


def untracked_not_ignored(root: Path) -> list[str]:
    return listed(root, "--others", "--exclude-standard")


def size_of(root: Path, paths: list[str]) -> int:
    """Bytes of the paths that exist (a tracked file deleted from the work tree travels as nothing)."""
    total = 0
    for p in paths:
        path = root / p
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
    return total


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0
