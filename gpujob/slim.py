"""Slim mode: the shipped weights (`models/*/model.pt`, ~56 MiB of the ~60 MiB tracked) taken out of what the device
tool sends, for the GPU window only, without touching a file on disk.

The tool sends the session's checkout, tracked files in full, whatever worktree a helper works in. A from-scratch
run needs no shipped weights, so for the window they are made untracked and ignored: their index entries are removed
(`git update-index --force-remove`) and their paths added to .git/info/exclude; `off` puts back the very same
entries (mode and blob id, recorded in .git/gpujob-slim.json) and the exclude lines. HEAD, the branch and the work
tree never change: the app and other sessions keep reading models/ as before. While slim is on, `git status` shows
the weights as deleted in the index: commit only with paths (`git commit -m ... -- PATHS`), never a bare
`git commit`, until `off`.
"""
from __future__ import annotations

import json
from pathlib import Path

from .tree import git, listed

PATTERNS = (":(glob)models/*/model.pt",)  # what slim takes out: the shipped weights, nothing a GPU job reads
STATE = "gpujob-slim.json"  # in .git/: the removed index entries, so `off` restores them exactly
MARK = "# gpujob slim (python -m gpujob slim off removes these lines)"


def _git_path(root: Path, name: str) -> Path:
    path = Path(git(root, "rev-parse", "--git-path", name).strip())
    return path if path.is_absolute() else root / path


def slim_paths(root: Path) -> list[str]:
    """The tracked paths slim takes out (those still tracked: none while slim is on)."""
    return listed(root, "--cached", "--", *PATTERNS)


def removed(root: Path) -> list[dict[str, str]]:
    """The entries slim removed ([] when off): each {mode, object, path}."""
    state = _git_path(root, STATE)
    return json.loads(state.read_text()) if state.is_file() else []


def is_on(root: Path) -> bool:
    return bool(removed(root))


def _exclude_lines(root: Path, paths: list[str], add: bool) -> None:
    exclude = _git_path(root, "info/exclude")
    exclude.parent.mkdir(parents=True, exist_ok=True)
    lines = exclude.read_text().splitlines() if exclude.is_file() else []
    ours = {MARK, *(f"/{p}" for p in paths)}
    lines = [line for line in lines if line not in ours]
    if add:
        lines += [MARK, *(f"/{p}" for p in paths)]
    exclude.write_text("\n".join(lines) + "\n" if lines else "")


def slim_on(root: Path) -> list[str]:
    """Take the weights out of the index (and so out of what travels); returns their paths."""
    if is_on(root):
        return [e["path"] for e in removed(root)]
    entries = []
    for line in git(root, "ls-files", "-s", "-z", "--", *PATTERNS).split("\0"):
        if line:
            info, path = line.split("\t", 1)
            mode, obj, _stage = info.split()
            entries.append({"mode": mode, "object": obj, "path": path})
    if not entries:
        return []
    paths = [e["path"] for e in entries]
    _git_path(root, STATE).write_text(json.dumps(entries, indent=1) + "\n")  # first: `off` can always undo
    _exclude_lines(root, paths, add=True)
    git(root, "update-index", "--force-remove", "--", *paths)
    return paths


def slim_off(root: Path) -> list[str]:
    """Put the removed index entries back exactly; returns their paths."""
    entries = removed(root)
    for e in entries:
        git(root, "update-index", "--add", "--cacheinfo", f"{e['mode']},{e['object']},{e['path']}")
    paths = [e["path"] for e in entries]
    _exclude_lines(root, paths, add=False)
    _git_path(root, STATE).unlink(missing_ok=True)
    return paths
