"""The pages a German and an English help package both hold: listed, parsed and paired by path.

Used by the LibreOffice and GIMP help readers, whose packages each hold one language's edition of the same
pages under a language folder.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from .debpkg import iter_deb_files
from .io import DataError


def package_pages(files: Mapping[str, Path], key: str, root: str, stats: Counter) -> Iterator[tuple[str, bytes]]:
    """(path relative to `root`, content) of the .html pages of one package; counts them as files_<key>."""
    if key not in files:
        raise DataError(f"no file given for source {key!r} (have: {', '.join(files) or 'none'})")
    for path, content in iter_deb_files(files[key], root + "*.html"):
        stats[f"files_{key}"] += 1
        yield path[len(root):], content


def paired_pages(files: Mapping[str, Path], keys: tuple[str, str], roots: tuple[str, str], parse: Callable,
                 stats: Counter) -> Iterator[tuple[str, object, object]]:
    """(relative path, parsed German page, parsed English page) of every page both packages hold, in German
    package order; `parse(content, where)` reads one page. The English pages are parsed first and kept (a few
    MB of text); the German ones are streamed. Counts files_<key>, files_only_de and files_only_en."""
    (de_key, en_key), (de_root, en_root) = keys, roots
    english = {rel: parse(c, f"{files.get(en_key)}:{en_root}{rel}")
               for rel, c in package_pages(files, en_key, en_root, stats)}
    de_pages = set()
    for rel, content in package_pages(files, de_key, de_root, stats):
        de_pages.add(rel)
        if rel not in english:
            stats["files_only_de"] += 1
            continue
        yield rel, parse(content, f"{files[de_key]}:{de_root}{rel}"), english[rel]
    stats["files_only_en"] = len(english.keys() - de_pages)

