"""German gettext message catalogs of free software (Debian packages and Python wheels): the corpus reader.

Where: a program's user-visible strings are translated in gettext catalogs, one per text domain and language:
.../<lang>/LC_MESSAGES/<domain>.mo (compiled, binary) or .po (text), a few projects spell it .../locale/de.po
or .../<lang>/<domain>_de.po. Where a package ships the same catalog as .po and .mo, the .po is read (it keeps
the defaults and the fuzzy flags); where it ships "de" and "de_DE", "de". `gettext_format` parses the files,
`catalog_text` turns each entry into clean (German, English) texts (what is paired, what is dropped, the
cleanup); entries of several sentences are then sentence-aligned by `block_pairs` (whose drop rules the help
readers share: empty, letterless or identical pairs go), and exact repeats inside one document are dropped.

Document id: "<package>/<domain>" ("libreoffice-l10n-de/sw", "sphinx/sphinx"), so a whole catalog stays in
one split; catalogs of one package sharing a domain name (wagtail's many "django") share the document.
Never read: Django's own catalogs (held out for evaluation): the `Django` package and any path under
django/conf/locale or django/contrib.
"""
from __future__ import annotations

import fnmatch
import zipfile
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .align import AlignStats
from .block_pairs import block_pairs, finish_stats, make_pair
from .catalog_text import entry_texts, text_pairs
from .debpkg import iter_deb_files
from .gettext_format import Entry, parse_mo, parse_po
from .io import DataError
from .records import Pair
from .sources import Source, sources_for

FEEDS = "catalogs"
LANGS = ("de", "de_DE")  # in order of preference; de_AT / de_CH are regional variants and not read
EXTS = (".po", ".mo")  # in order of preference
FORBIDDEN_PACKAGES = frozenset({"django"})
FORBIDDEN_PATHS = ("django/conf/locale", "django/contrib")


# --- where the German catalogs are ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Location:
    key: str  # the catalog with its language and extension left out: one key per domain and folder
    lang: str
    ext: str
    domain: str


def catalog_location(path: str) -> Location | None:
    """The German catalog a package path holds, or None. Recognised: <dir>/<lang>/LC_MESSAGES/<domain>.<ext>,
    <dir>/<lang>/<domain>[_<lang>].<ext> and <dir>/<module>/locale/<lang>.<ext> (Tryton: domain <module>)."""
    stem, dot, ext = path.rpartition(".")
    ext = dot + ext
    if ext not in EXTS or any(p in path for p in FORBIDDEN_PATHS):
        return None
    parts = stem.split("/")
    if len(parts) >= 3 and parts[-2] == "LC_MESSAGES" and parts[-3] in LANGS:
        lang, domain, key = parts[-3], parts[-1], "/".join(parts[:-3] + ["*", "LC_MESSAGES", parts[-1]])
    elif len(parts) >= 2 and parts[-1] in LANGS:
        lang, key = parts[-1], "/".join(parts[:-1] + ["*"])
        domain = parts[-3] if len(parts) >= 3 and parts[-2] == "locale" else parts[-2]
    elif len(parts) >= 2 and parts[-2] in LANGS:
        lang, domain = parts[-2], parts[-1].removesuffix("_" + parts[-2])
        key = "/".join(parts[:-2] + ["*", domain])
    else:
        return None
    return Location(key, lang, ext, domain)


def package_files(src: Source, path: Path) -> Iterator[tuple[str, bytes]]:
    """(path, content) of the files of one .deb or .whl matching the source's member pattern."""
    pattern = src.member or "*"
    if src.registry == "debian":
        yield from iter_deb_files(path, pattern)
        return
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if not info.is_dir() and fnmatch.fnmatchcase(info.filename, pattern):
                    yield info.filename, z.read(info)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise DataError(f"{path}: cannot read the wheel ({e})") from None


def german_catalogs(src: Source, path: Path, stats: Counter) -> list[tuple[Location, bytes]]:
    """The German catalogs of one package, one per key (the preferred language and extension), in path order."""
    by_key: dict[str, dict[tuple[int, int], tuple[Location, bytes]]] = {}
    for name, content in package_files(src, path):
        loc = catalog_location(name)
        if loc is not None:
            by_key.setdefault(loc.key, {})[(LANGS.index(loc.lang), EXTS.index(loc.ext))] = (loc, content)
    out = []
    for key in sorted(by_key):
        variants = by_key[key]
        stats["catalog_files_skipped_variant"] += len(variants) - 1
        out.append(variants[min(variants)])
    return out


def parse_catalog(loc: Location, data: bytes, where: str) -> list[Entry]:
    """The entries of one catalog file, by its extension."""
    return parse_mo(data, where) if loc.ext == ".mo" else parse_po(data, where)


# --- the reader ---------------------------------------------------------------------------------------------------
def catalog_pairs(package: str, loc: Location, entries: list[Entry], stats: Counter,
                  align_stats: AlignStats) -> Iterator[Pair]:
    doc = f"{package}/{loc.domain}"
    seen: set[tuple[str, str]] = set()
    for e in entries:
        for de_raw, en_raw in entry_texts(e, stats):
            stats["texts"] += 1
            for de, en in text_pairs(de_raw, en_raw, stats):
                for s_de, s_en in block_pairs(de, en, stats, align_stats):
                    if (s_de, s_en) in seen:
                        stats["dropped_repeat_in_catalog"] += 1
                        continue
                    seen.add((s_de, s_en))
                    yield make_pair(s_de, s_en, FEEDS, doc, stats)


def read_package(src: Source, path: Path, stats: Counter, align_stats: AlignStats) -> Iterator[Pair]:
    if src.package.lower() in FORBIDDEN_PACKAGES:
        raise DataError(f"{src.package}: Django's own catalogs are held out for evaluation and never read")
    catalogs = german_catalogs(src, path, stats)
    if not catalogs:
        raise DataError(f"{path}: no German catalog (.../de/LC_MESSAGES/*.mo|po) matching {src.member or '*'}")
    for loc, data in catalogs:
        stats["catalogs_read"] += 1
        entries = parse_catalog(loc, data, f"{path}:{loc.key.replace('*', loc.lang)}{loc.ext}")
        stats["entries"] += sum(1 for e in entries if e.msgid)
        before = stats["pairs"]
        yield from catalog_pairs(src.package, loc, entries, stats, align_stats)
        stats["catalogs_paired"] += stats["pairs"] > before


def read_pairs(files: Mapping[str, Path], stats: dict[str, int] | None = None,
               sources: Mapping[str, Source] | None = None) -> Iterator[Pair]:
    """Pairs of every German catalog of the sources feeding "catalogs" (files: {source key: .deb/.whl});
    `sources` replaces sources_for(FEEDS) (tests)."""
    counts: Counter = Counter()
    align_stats = AlignStats()
    sources = sources_for(FEEDS) if sources is None else sources
    missing = [k for k in sources if k not in files]
    if missing:
        raise DataError(f"no file given for source(s) {', '.join(missing)}")
    for key, src in sources.items():
        before = counts["pairs"]
        yield from read_package(src, Path(files[key]), counts, align_stats)
        counts[f"pairs_{key}"] = counts["pairs"] - before
    finish_stats(counts, align_stats, stats)
