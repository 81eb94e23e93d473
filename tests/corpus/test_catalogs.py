"""The message-catalog reader on tiny packages holding entries copied from real catalogs (GTK 3.24 gtk30.mo
in libgtk-3-common, plone.app.locales 7.0.4 plone.po, trytond 8.2 ir/locale/de.po)."""
from __future__ import annotations

import struct
from collections import Counter

import pytest
from package_fixtures import make_deb, make_wheel

from corpus import catalog_text, catalogs, gettext_format
from corpus.io import DataError
from corpus.records import Pair
from corpus.sources import Source

HEADER = ("Project-Id-Version: gtk+ master\nContent-Type: text/plain; charset=UTF-8\n"
          "Content-Transfer-Encoding: 8bit\nPlural-Forms: nplurals=2; plural=(n != 1);\n")

# gtk30.mo as msgunfmt shows it: a context joined by \x04, plural forms by \x00.
GTK30 = {
    "": HEADER,
    "_Open": "Ö_ffnen",
    "Stock label\x04_Cancel": "_Abbrechen",
    "Cance_l": "_Abbrechen",  # the same pair once the accelerators are gone: a repeat
    "Can't load file: %s\n": "Datei kann nicht geladen werden: %s\n",
    "Opening %d Item\x00Opening %d Items": "%d Objekt wird geöffnet\x00%d Objekte werden geöffnet",
    "<b>%s</b>": "<b>%s</b>",  # markup and a placeholder only
    "translator-credits": "Christian Kirbach <christian.kirbach@gmail.com>",
    "GTK Inspector": "GTK Inspector",  # left in English
    "Select a File": "Datei auswählen",
    "Usage:\n  gtk-launch [OPTION…] APPLICATION [URI…]\n":
        "Aufruf:\n  gtk-launch [OPTION …] ANWENDUNG [URI …]\n",
    "Changes are applied <i>instantly</i> and globally,\nfor the whole application.":
        "Die Änderungen werden sofort und global für die gesamte Anwendung angewendet.",
    "Set file_name in &Edit": "file_name unter &Bearbeiten festlegen",
    # wrapped at a fixed width: two lines on both sides, broken at different words
    "Cannot change to folder because it\nis not local":
        "Es konnte nicht in den Ordner gewechselt\nwerden, weil er nicht lokal ist",
    "The folder contents could not be displayed. Please try again.":
        "Der Ordnerinhalt konnte nicht angezeigt werden. Bitte versuchen Sie es erneut.",
}

PLONE_PO = r'''# Translation of plone.pot to German
# Jan Ulrich Hasecke <jan.ulrich@hasecke.com>, 2003-2010.
msgid ""
msgstr ""
"Project-Id-Version: Plone\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Content-Transfer-Encoding: 8bit\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"
"Domain: plone\n"

#: plone/app/dexterity/interfaces.py:89
msgid "# of items"
msgstr "Anzahl"

#. Default: "Events in next 7 days."
#: plone/app/event/browser/event_listing.py:284
msgid "7days_events"
msgstr "Termine in den nächsten 7 Tagen"

#: plone/app/content/browser/templates/add.pt:12
msgid "label_add_item"
msgstr "Element hinzufügen"

#: plone/app/theming/interfaces.py:66
#, fuzzy, python-format
msgid "Absolute prefix"
msgstr "Absoluter Prefix"

#: plone.locking/plone/locking/browser/locking.py:141
msgid "1 minute"
msgid_plural "${number} minutes"
msgstr[0] "1 Minute"
msgstr[1] "${number} Minuten"

#: plone/app/event/browser/event_view.pt:48
msgid "Calendar"
msgstr ""

#: plone/app/theming/browser/controlpanel.pt:174
msgid ""
"(this theme overrides a "
"filesystem theme)"
msgstr ""
"(dieses Design überschreibt ein "
"Dateisystem-Design)"
#~ msgid "Old text"
#~ msgstr "Alter Text"
'''

TRYTOND_PO = r'''#
msgid ""
msgstr "Content-Type: text/plain; charset=utf-8\n"

msgctxt "field:ir.action,name:"
msgid "Name"
msgstr "Name"

msgctxt "model:ir.ui.menu,name:"
msgid "Scheduled Actions"
msgstr "Geplante Aktionen"
'''


def make_mo(entries: dict[str, str]) -> bytes:
    """A little-endian revision-0 .mo as msgfmt writes it: header, two (length, offset) tables, the strings."""
    keys = sorted(entries)
    origs = [k.encode() for k in keys]
    trans = [entries[k].encode() for k in keys]
    n = len(keys)
    orig_at, trans_at = 28, 28 + 8 * n
    pos = trans_at + 8 * n
    table_o, table_t, blob = b"", b"", b""
    for table, strings in (("o", origs), ("t", trans)):
        for s in strings:
            rec = struct.pack("<2I", len(s), pos + len(blob))
            if table == "o":
                table_o += rec
            else:
                table_t += rec
            blob += s + b"\0"
    return struct.pack("<7I", 0x950412DE, 0, n, orig_at, trans_at, 0, 0) + table_o + table_t + blob


def _sources(**keys: tuple[str, str, str]) -> dict[str, Source]:
    return {k: Source(pkg, "1", f"{pkg}.pkg", "0" * 64, registry, "GPL", "test", member, feeds=catalogs.FEEDS)
            for k, (pkg, registry, member) in keys.items()}


@pytest.fixture
def packages(tmp_path):
    deb = make_deb(tmp_path / "libgtk-3-common.deb", {
        "usr/share/locale/de/LC_MESSAGES/gtk30.mo": make_mo(GTK30),
        "usr/share/locale/de_DE/LC_MESSAGES/gtk30.mo": make_mo({"": HEADER, "Quit": "Verlassen"}),  # "de" wins
        "usr/share/locale/de_CH/LC_MESSAGES/gtk30.mo": make_mo({"": HEADER, "Size": "Grösse"}),
        "usr/share/locale/fr/LC_MESSAGES/gtk30.mo": make_mo({"": HEADER, "Size": "Taille"}),
        "usr/share/doc/libgtk-3-common/copyright": "GPL",
    })
    whl = make_wheel(tmp_path / "plone.whl", {
        "plone/app/locales/locales/de/LC_MESSAGES/plone.po": PLONE_PO,
        "plone/app/locales/locales/de/LC_MESSAGES/plone.mo": make_mo({"": HEADER, "Home": "Start"}),  # .po wins
        "trytond/ir/locale/de.po": TRYTOND_PO,
        "django/contrib/admin/locale/de/LC_MESSAGES/django.po": "held out: never parsed",
    })
    sources = _sources(gtk=("libgtk-3-common", "debian", "usr/share/locale/*"),
                       plone=("plone.app.locales", "pypi", ""))
    return {"gtk": deb, "plone": whl}, sources


def test_reads_catalog_entries_as_pairs(packages):
    files, sources = packages
    stats: dict[str, int] = {}
    pairs = list(catalogs.read_pairs(files, stats, sources=sources))
    got = [(p.de, p.en, p.kind, p.doc) for p in pairs]
    gtk, plone, ir = "libgtk-3-common/gtk30", "plone.app.locales/plone", "plone.app.locales/ir"
    assert got == [
        ("Datei kann nicht geladen werden: %s", "Can't load file: %s", "phrase", gtk),
        ("Abbrechen", "Cancel", "phrase", gtk),
        ("Es konnte nicht in den Ordner gewechselt werden, weil er nicht lokal ist",
         "Cannot change to folder because it is not local", "phrase", gtk),
        ("Die Änderungen werden sofort und global für die gesamte Anwendung angewendet.",
         "Changes are applied instantly and globally, for the whole application.", "sentence", gtk),
        ("%d Objekt wird geöffnet", "Opening %d Item", "phrase", gtk),
        ("%d Objekte werden geöffnet", "Opening %d Items", "phrase", gtk),
        ("Datei auswählen", "Select a File", "phrase", gtk),
        ("file_name unter Bearbeiten festlegen", "Set file_name in Edit", "phrase", gtk),
        ("Der Ordnerinhalt konnte nicht angezeigt werden.", "The folder contents could not be displayed.",
         "sentence", gtk),
        ("Bitte versuchen Sie es erneut.", "Please try again.", "sentence", gtk),
        ("Aufruf:", "Usage:", "phrase", gtk),
        ("gtk-launch [OPTION …] ANWENDUNG [URI …]", "gtk-launch [OPTION…] APPLICATION [URI…]", "phrase", gtk),
        ("Öffnen", "Open", "phrase", gtk),
        ("Anzahl", "# of items", "phrase", plone),
        ("Termine in den nächsten 7 Tagen", "Events in next 7 days.", "phrase", plone),
        ("${number} Minuten", "${number} minutes", "phrase", plone),  # "1 Minute" / "1 minute": identical
        ("(dieses Design überschreibt ein Dateisystem-Design)", "(this theme overrides a filesystem theme)",
         "phrase", plone),
        ("Geplante Aktionen", "Scheduled Actions", "phrase", ir),
    ]
    assert all(p.source == "catalogs" for p in pairs)
    assert pairs[0] == Pair("Datei kann nicht geladen werden: %s", "Can't load file: %s", "phrase")
    assert stats["catalogs_read"] == 3 and stats["catalog_files_skipped_variant"] == 2
    assert stats["dropped_credits"] == 1 and stats["dropped_repeat_in_catalog"] == 1
    assert stats["dropped_placeholders_only"] == 1 and stats["dropped_identical"] == 3  # GTK Inspector, Name, 1 minute
    assert stats["dropped_fuzzy"] == 1 and stats["dropped_untranslated"] == 1
    assert stats["dropped_msgid_is_key"] == 1
    assert stats["entries_split_by_lines"] == 1 and stats["entries_lines_joined"] == 2
    assert stats["pairs"] == len(pairs) and stats["pairs_gtk"] == 13 and stats["pairs_plone"] == 5


@pytest.mark.parametrize(("de", "en", "want"), [
    ("Ö_ffnen", "_Open", ("Öffnen", "Open")),
    ("&Datei", "&File", ("Datei", "File")),
    ("~Öffnen...", "~Open...", ("Öffnen...", "Open...")),
    ("Speichern && &Beenden", "Save && &Quit", ("Speichern & Beenden", "Save & Quit")),  # Qt's literal "&&"
    ("Ziehen & Ablegen", "Drag & Drop", ("Ziehen & Ablegen", "Drag & Drop")),
    ("&lt;Datei&gt;", "&lt;file&gt;", ("&lt;Datei&gt;", "&lt;file&gt;")),  # entities are no accelerators
    ("LC_ALL setzen", "Set LC_ALL", ("LC_ALL setzen", "Set LC_ALL")),  # an identifier on both sides
    ("_Name festlegen", "Set _Name", ("Name festlegen", "Set Name")),  # the same accelerated word
    ("file_name unter &Bearbeiten", "file_name in &Edit", ("file_name unter Bearbeiten", "file_name in Edit")),
    ("%EXTENSION_NAME deaktivieren", "Disable %EXTENSION_NAME", ("%EXTENSION_NAME deaktivieren",
                                                                 "Disable %EXTENSION_NAME")),
    ("Siehe ~/.config", "See ~/.config", ("Siehe ~/.config", "See ~/.config")),
    ("So&ftware durchschleifen", "So&ftware Playthrough", ("Software durchschleifen", "Software Playthrough")),
    ("Forschung (F&E)", "Research (R&D)", ("Forschung (F&E)", "Research (R&D)")),  # abbreviations
    ("/_Bearbeiten/_Thread auswählen", "/_Edit/Select _thread",
     ("/Bearbeiten/Thread auswählen", "/Edit/Select thread")),  # a GTK menu path: one marker per item
])
def test_strip_accelerators(de, en, want):
    assert catalog_text.strip_accelerators(de, en) == want


@pytest.mark.parametrize(("text", "want"), [
    ("<b>Allgemein</b>", "Allgemein"),
    ("<qt>Zeile 1<br/>Zeile 2</qt>", "Zeile 1\nZeile 2"),
    ("<para>Dateien in <filename>%1</filename> erstellen</para>", "\nDateien in %1 erstellen\n"),
    ("Zeile<nl/>Zeile", "Zeile\nZeile"),
    ("cp <file> <dir>", "cp <file> <dir>"),  # metavariables of a usage message stay
    ("Ziehen &amp; Ablegen &lt;x&gt;", "Ziehen & Ablegen <x>"),
])
def test_strip_markup(text, want):
    assert catalog_text.strip_markup(text) == want


@pytest.mark.parametrize(("msgid", "paired"), [
    ("label_add_item", False), ("job-error-action.cancel-job", False), ("help.title", False),  # message keys
    ("Cancel job", True), ("e.g.", True), ("Printer Deleted", True),
])
def test_message_keys_are_not_english(msgid, paired):
    stats: Counter = Counter()
    assert bool(list(catalog_text.entry_texts(gettext_format.Entry("", msgid, "", ("Übersetzung",)), stats))) is paired
    assert stats["dropped_msgid_is_key"] == (not paired)


@pytest.mark.parametrize(("text", "only"), [
    ("%s", True), ("%(name)s: %d", True), ("{0} – {1}", True), ("<b>%s</b>", True), ("$HOME", True),
    ("https://www.gimp.org/", True), ("%1$s (%2$d%%)", True), ("index.html", True),
    ("%s files", False), ("Öffnen", False), ("%<#pragma%> ignored", False),
])
def test_placeholders_only(text, only):
    assert catalog_text.placeholders_only(text) is only


@pytest.mark.parametrize(("path", "want"), [
    ("usr/share/locale/de/LC_MESSAGES/gtk30.mo", ("de", ".mo", "gtk30")),
    ("usr/lib/libreoffice/program/resource/de/LC_MESSAGES/sw.mo", ("de", ".mo", "sw")),
    ("indico/translations/de_DE/LC_MESSAGES/messages.po", ("de_DE", ".po", "messages")),
    ("trytond/ir/locale/de.po", ("de", ".po", "ir")),
    ("usr/share/cups/locale/de/cups_de.po", ("de", ".po", "cups")),
    ("usr/share/locale/de_CH/LC_MESSAGES/gtk30.mo", None),
    ("usr/share/locale/de/LC_MESSAGES/gtk30.txt", None),
    ("site-packages/django/conf/locale/de/LC_MESSAGES/django.mo", None),
])
def test_catalog_location(path, want):
    loc = catalogs.catalog_location(path)
    assert (loc and (loc.lang, loc.ext, loc.domain)) == want


def test_po_plural_and_escapes():
    po = b'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n' \
         b'msgctxt "menu"\nmsgid "Tab\\tstop \\"x\\""\nmsgstr "Tab\\tstopp \\"x\\""\n'
    (header, entry) = gettext_format.parse_po(po, "test.po")
    assert header.msgid == "" and entry == gettext_format.Entry("menu", 'Tab\tstop "x"', "", ('Tab\tstopp "x"',))


def test_big_endian_mo_and_latin1_charset():
    """The reader follows the magic number's byte order and the charset the header names."""
    strings = [(b"", b"Content-Type: text/plain; charset=ISO-8859-1\n"), (b"Size", "Größe".encode("latin-1"))]
    pos = 28 + 16 * len(strings)
    origs, trans, blob = b"", b"", b""
    for o, _ in strings:
        origs += struct.pack(">2I", len(o), pos + len(blob))
        blob += o + b"\0"
    for _, t in strings:
        trans += struct.pack(">2I", len(t), pos + len(blob))
        blob += t + b"\0"
    big = struct.pack(">7I", 0x950412DE, 0, len(strings), 28, 28 + 8 * len(strings), 0, 0) + origs + trans + blob
    assert gettext_format.parse_mo(big, "x.mo")[1] == gettext_format.Entry("", "Size", "", ("Größe",))


def test_corrupt_inputs_raise_data_error(tmp_path, packages):
    files, sources = packages
    bad_deb = tmp_path / "broken.deb"
    bad_deb.write_bytes(b"not an ar archive")
    with pytest.raises(DataError, match="not a Debian package"):
        list(catalogs.read_pairs({**files, "gtk": bad_deb}, sources=sources))
    bad_whl = tmp_path / "broken.whl"
    bad_whl.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(DataError, match="cannot read the wheel"):
        list(catalogs.read_pairs({**files, "plone": bad_whl}, sources=sources))
    bad_mo = make_deb(tmp_path / "bad-mo.deb", {"usr/share/locale/de/LC_MESSAGES/x.mo": b"\x00" * 40})
    with pytest.raises(DataError, match="bad magic number"):
        list(catalogs.read_pairs({"gtk": bad_mo}, sources={"gtk": sources["gtk"]}))
    truncated = make_deb(tmp_path / "short-mo.deb",
                         {"usr/share/locale/de/LC_MESSAGES/x.mo": make_mo(GTK30)[:200]})
    with pytest.raises(DataError, match="corrupt .mo"):
        list(catalogs.read_pairs({"gtk": truncated}, sources={"gtk": sources["gtk"]}))
    empty = make_deb(tmp_path / "empty.deb", {"usr/share/doc/x/copyright": "GPL"})
    with pytest.raises(DataError, match="no German catalog"):
        list(catalogs.read_pairs({"gtk": empty}, sources={"gtk": sources["gtk"]}))
    with pytest.raises(DataError, match="no file given"):
        list(catalogs.read_pairs({"gtk": files["gtk"]}, sources=sources))


def test_django_is_never_read(tmp_path):
    whl = make_wheel(tmp_path / "Django.whl", {"django/conf/locale/de/LC_MESSAGES/django.po": PLONE_PO})
    with pytest.raises(DataError, match="held out"):
        list(catalogs.read_pairs({"dj": whl}, sources=_sources(dj=("Django", "pypi", ""))))


def test_pinned_sources_are_catalogs_only():
    sources = catalogs.sources_for(catalogs.FEEDS)
    assert sources and all(s.package.lower() != "django" for s in sources.values())
    assert Counter(s.registry for s in sources.values()).keys() <= {"debian", "pypi"}
