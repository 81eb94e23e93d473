"""The Debian manuals reader on tiny packages cut from the real pages (DocBook XSL, Sphinx, Publican)."""
from __future__ import annotations

from collections import Counter

import pytest
from package_fixtures import make_deb

from corpus import debian_docs
from corpus.debian_docs import MANUALS, Edition, Manual, parse_page, read_pairs
from corpus.io import DataError
from corpus.sources import SOURCES, sources_for

# --- DocBook XSL (debian-reference ch06), trimmed: nav bar, TOC, an idm index anchor numbered differently in
# each language, footnote marker, listing, a table with its caption, and the German translators' credits.
DOCBOOK = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
  <head>
    <title>{chapter}</title>
    <link rel="stylesheet" type="text/css" href="debian-reference.css"/>
  </head>
  <body>
    <div class="navheader">
      <table width="100%" summary="Navigation header"><tr><th colspan="3" align="center">{chapter}</th></tr></table>
      <hr/>
    </div>
    <div class="chapter">
      <div class="titlepage"><div><div>
        <h1 class="title"><a id="_network_applications"/>{chapter}</h1>
      </div></div></div>
      <div class="toc"><p><strong>{toc}</strong></p>
        <dl class="toc"><dt><span class="section"><a href="ch06.html#_web_browsers">{section}</a></span></dt></dl>
      </div>
      <div class="section">
        <div class="titlepage"><div><div>
          <h2 class="title"><a id="_web_browsers"/>{section}</h2>
        </div></div></div>
        <p>{para}<a id="{idm}" class="indexterm"/></p>
        <pre class="screen">$ ssh username@name.domain.ext</pre>
        <p>{footnoted}<a href="#ftn.{idm}" class="footnote" id="x{idm}"><sup class="footnote">[82]</sup></a></p>
        <div class="table">
          <a id="listofremoteaccerverandutilities"/>
          <p class="title">
            <strong>{caption}</strong>
          </p>
          <div class="table-contents">
            <table class="table" border="1">
              <thead><tr><th style="text-align: left"> {package} </th><th style="text-align: left"> Popcon </th>
                <th style="text-align: left"> {description} </th></tr></thead>
              <tbody><tr>
                <td style="text-align: left">
                  <a class="ulink" href="http://packages.debian.org/sid/openssh-client">
<code class="literal">openssh-client</code> </a>
                </td>
                <td style="text-align: left"><a class="ulink" href="http://qa.debian.org/popcon">V:856, I:997</a></td>
                <td style="text-align: left"><a class="ulink" href="http://packages.qa.debian.org/o/x.html">5609</a></td>
                <td style="text-align: left"> {cell} </td>
              </tr></tbody>
            </table>
          </div>
        </div>
      </div>
      <div class="section">
        <div class="titlepage"><div><div><h2 class="title"><a id="_credits"/>6.2. {credits}</h2></div></div></div>
        {credit_paras}
      </div>
    </div>
    <div class="navfooter"><hr/><table width="100%" summary="Navigation footer"><tr>
      <td width="40%" align="left"><a accesskey="p" href="ch05.html">Prev</a></td></tr></table></div>
  </body>
</html>
"""
DOCBOOK_DE = DOCBOOK.format(
    chapter="Kapitel 6. Netzwerkanwendungen", toc="Inhaltsverzeichnis", section="6.1. Webbrowser",
    para="Es gibt viele Webbrowser-Pakete. Mit ihnen können Sie auf entfernte Inhalte\nzugreifen.",
    idm="idm1824", footnoted="Sobald Sie ein offizieller Entwickler sind, können Sie hochladen.",
    caption="Tabelle 6.7. Liste von Servern für Fernzugriff", package="Paket", description="Beschreibung",
    cell="Secure-Shell-Client", credits="Danksagung",
    credit_paras="<p>Übersetzt von Jens Seidel.</p><p>Korrekturen: Chris Leick.</p>")
DOCBOOK_EN = DOCBOOK.format(
    chapter="Chapter 6. Network applications", toc="Table of Contents", section="6.1. Web browsers",
    para="There are many web browser packages. They let you access remote content.",
    idm="idm1790", footnoted="Once you are an official developer, you can upload.",
    caption="Table 6.7. List of remote access server", package="package", description="description",
    cell="Secure shell client", credits="Credits", credit_paras="<p>Thanks to all translators.</p>")

# --- Sphinx (developers-reference), trimmed: related nav bar, section number, "¶" permalink, sidebar.
SPHINX = """<!DOCTYPE html>
<html lang="{lang}">
  <head><meta charset="utf-8" /><title>{title} &#8212; Debian Developer's Reference</title>
    <script data-url_root="./" id="documentation_options" src="_static/documentation_options.js"></script>
  </head><body>
    <div class="related" role="navigation" aria-label="related navigation"><h3>Navigation</h3>
      <ul><li class="right"><a href="genindex.html" title="General Index">index</a></li></ul></div>
    <div class="document"><div class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">
  <section id="{section_id}">
<span id="scope"></span><h1><span class="section-number">1. </span>{title}<a class="headerlink" href="#scope"
 title="Permalink to this heading">¶</a></h1>
<p>{para}</p>
<div class="highlight-default notranslate"><div class="highlight"><pre><span></span>$ dch -i</pre></div></div>
<ul class="simple">
<li><p>{item}</p></li>
<li><p><code class="docutils literal notranslate"><span class="pre">debian/changelog</span></code></p></li>
</ul>
</section>
    </div></div></div>
      <div class="sphinxsidebar" role="navigation" aria-label="main navigation"><div class="sphinxsidebarwrapper">
        <p class="topless"><a href="index.html" title="previous chapter">{sidebar}</a></p></div></div>
    </div>
  </body>
</html>
"""
SPHINX_DE = SPHINX.format(
    lang="de", section_id="geltungsbereich-dieses-dokuments", title="Geltungsbereich dieses Dokuments",
    para="Das Ziel dieses Dokuments ist ein Überblick über die empfohlenen Vorgehensweisen.",
    item="Die Bearbeitung von debian/changelog", sidebar="Vorheriges Thema")
SPHINX_EN = SPHINX.format(
    lang="en", section_id="scope-of-this-document", title="Scope of This Document",
    para="The purpose of this document is to provide an overview of the recommended procedures.",
    item="Editing debian/changelog", sidebar="Previous topic")

# --- Publican (debian-handbook): both languages in one package, paragraphs as <div class="para">.
PUBLICAN = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>A.7. Kali Linux</title></head><body>
<p id="title"><a class="left" href="http://www.debian.org"><img alt="Product Site"
 src="Common_Content/images//image_left.png" /></a></p>
<ul class="docnav top"><li class="previous"><a accesskey="p" href="sect.tails.html"><strong>{prev}</strong></a>
</li></ul>
<div class="section"><div class="titlepage"><div><div><h2 class="title"><a id="sect.kali"></a>A.7. Kali Linux</h2>
</div></div></div>
<div class="para">{para}</div></div>
<ul class="docnav"><li class="up"><a accesskey="u" href="#"><strong>{up}</strong></a></li></ul>
</body></html>
"""
PUBLICAN_DE = PUBLICAN.format(prev="Zurück", up="Nach oben",
                              para="Kali Linux ist eine auf Debian basierende Distribution für Penetrationstests.")
PUBLICAN_EN = PUBLICAN.format(prev="Prev", up="Up",
                              para="Kali Linux is a Debian-based distribution specialising in penetration testing.")

REFERENCE = next(m for m in MANUALS if m.name == "debian-reference")
DEVREF = next(m for m in MANUALS if m.name == "developers-reference")
HANDBOOK = next(m for m in MANUALS if m.name == "debian-handbook")


@pytest.fixture()
def packages(tmp_path):
    files = {
        "debian_reference_de": make_deb(tmp_path / "ref-de.deb", {
            "usr/share/debian-reference/ch06.de.html": DOCBOOK_DE,
            "usr/share/doc/debian-reference-de/copyright": "GPL-2+"}),
        "debian_reference_en": make_deb(tmp_path / "ref-en.deb", {
            "usr/share/debian-reference/ch06.en.html": DOCBOOK_EN,
            "usr/share/debian-reference/ch07.en.html": DOCBOOK_EN}),  # no German edition: unpaired
        "developers_reference_de": make_deb(tmp_path / "dev-de.deb", {
            "usr/share/developers-reference/de/scope.html": SPHINX_DE,
            "usr/share/developers-reference/de/developers-reference.html": SPHINX_DE}),  # the one-page copy
        "developers_reference_en": make_deb(tmp_path / "dev-en.deb", {
            "usr/share/developers-reference/scope.html": SPHINX_EN,
            "usr/share/developers-reference/developers-reference.html": SPHINX_EN}, compression="gz"),
        "debian_handbook": make_deb(tmp_path / "handbook.deb", {
            "usr/share/doc/debian-handbook/html/de-DE/sect.kali.html": PUBLICAN_DE,
            "usr/share/doc/debian-handbook/html/en-US/sect.kali.html": PUBLICAN_EN,
            "usr/share/doc/debian-handbook/html/fr-FR/sect.kali.html": PUBLICAN_EN}),
    }
    return files


def test_docbook_pairs_by_structure(packages):
    stats: dict[str, int] = {}
    pairs = list(read_pairs(packages, stats, manuals=[REFERENCE]))
    got = [(p.de, p.en, p.kind, p.doc) for p in pairs]
    doc = "debian-reference/ch06.html"
    assert got == [
        ("Netzwerkanwendungen", "Network applications", "phrase", doc),
        ("Webbrowser", "Web browsers", "phrase", doc),
        ("Es gibt viele Webbrowser-Pakete.", "There are many web browser packages.", "sentence", doc),
        ("Mit ihnen können Sie auf entfernte Inhalte zugreifen.", "They let you access remote content.",
         "sentence", doc),
        ("Sobald Sie ein offizieller Entwickler sind, können Sie hochladen.",
         "Once you are an official developer, you can upload.", "sentence", doc),
        ("Liste von Servern für Fernzugriff", "List of remote access server", "phrase", doc),
        ("Paket", "package", "phrase", doc),
        ("Beschreibung", "description", "phrase", doc),
        ("Secure-Shell-Client", "Secure shell client", "phrase", doc),
    ]
    assert all(p.source == "debian_docs" for p in pairs)
    # the credits section has 2 paragraphs in German, 1 in English: skipped whole, its heading included
    assert stats["sections_mismatched"] == 1 and stats["blocks_in_mismatched_sections"] == 3
    assert stats["dropped_untranslated"] == 3  # "openssh-client", "Popcon", "V:856, I:997"
    assert stats["dropped_no_letters"] == 1  # the size cell "5609"
    assert stats["files_paired"] == 1 and stats["files_unpaired_en"] == 1 and stats["files_unpaired_de"] == 0
    assert stats["pairs"] == len(pairs) == stats["pairs_sentence"] + stats["pairs_phrase"]


def test_sphinx_folder_edition_and_excluded_pages(packages):
    stats: dict[str, int] = {}
    pairs = list(read_pairs(packages, stats, manuals=[DEVREF]))
    assert [(p.de, p.en, p.doc) for p in pairs] == [
        ("Geltungsbereich dieses Dokuments", "Scope of This Document", "developers-reference/scope.html"),
        ("Das Ziel dieses Dokuments ist ein Überblick über die empfohlenen Vorgehensweisen.",
         "The purpose of this document is to provide an overview of the recommended procedures.",
         "developers-reference/scope.html"),
        ("Die Bearbeitung von debian/changelog", "Editing debian/changelog", "developers-reference/scope.html"),
    ]
    assert stats["files_de"] == 1 and stats["files_paired"] == 1  # developers-reference.html not read


def test_publican_both_languages_in_one_package(packages):
    pairs = list(read_pairs(packages, manuals=[HANDBOOK]))
    assert [(p.de, p.en, p.doc) for p in pairs] == [
        ("Kali Linux ist eine auf Debian basierende Distribution für Penetrationstests.",
         "Kali Linux is a Debian-based distribution specialising in penetration testing.",
         "debian-handbook/sect.kali.html")]  # "A.7. Kali Linux" is the same in both: dropped


def test_generated_ids_do_not_cut_sections():
    de = parse_page(DOCBOOK_DE.encode(), "de")
    assert "idm1824" not in [a for a, _ in de.anchors] and "_web_browsers" in [a for a, _ in de.anchors]


def test_shifted_structure_is_skipped_not_misaligned():
    """An extra English paragraph inside one section: that section gives nothing, the next one still pairs."""
    page = '<html><body><h2><a id="a"/>{h1}</h2>{body}<h2><a id="b"/>{h2}</h2><p>{last}</p></body></html>'
    de = parse_page(page.format(h1="Eins", body="<p>Erster Absatz.</p>", h2="Zwei", last="Ende.").encode(), "de")
    en = parse_page(page.format(h1="One", body="<p>New paragraph.</p><p>First paragraph.</p>", h2="Two",
                                last="The end.").encode(), "en")
    stats: Counter = Counter()
    pairs = [(x.text, y.text) for x, y in debian_docs.paired_blocks(de, en, stats)]
    assert pairs == [("Zwei", "Two"), ("Ende.", "The end.")]
    assert stats["sections_mismatched"] == 1


def test_unclosed_paragraphs_and_inline_code():
    page = parse_page(b"<html><head><title>T</title><body><p>Rufen Sie <code>apt-get</code> auf<p>Zweiter<br>"
                      b"Absatz</body>", "x")
    assert [b.text for b in page.blocks] == ["Rufen Sie apt-get auf", "Zweiter Absatz"]


def test_corrupt_package_raises(tmp_path, packages):
    bad = tmp_path / "bad.deb"
    bad.write_bytes(b"!<arch>\nnot really a package")
    with pytest.raises(DataError):
        list(read_pairs({**packages, "debian_reference_de": bad}, manuals=[REFERENCE]))
    with pytest.raises(DataError, match="debian_reference_en"):
        list(read_pairs({"debian_reference_de": packages["debian_reference_de"]}, manuals=[REFERENCE]))
    # a real package of the wrong kind: no pages where the German edition should be
    with pytest.raises(DataError, match="no pages"):
        list(read_pairs({**packages, "debian_reference_de": packages["debian_handbook"]}, manuals=[REFERENCE]))


def test_sources_cover_every_manual():
    keys = set(sources_for(debian_docs.FEEDS))
    used = {k for m in MANUALS for k in (m.de.key, m.en.key)}
    assert used == keys
    assert all(SOURCES[k].registry == "debian" for k in keys)


def test_relative_paths():
    manual = Manual("m", Edition("d", "doc/de/", ".de.html"), Edition("e", "doc/", ".html"), exclude=("all.html",))
    assert manual.relative(manual.de, "doc/de/ch01.de.html") == "ch01.html"
    assert manual.relative(manual.en, "doc/ch01.html") == "ch01.html"
    assert manual.relative(manual.en, "doc/de/ch01.de.html") is None  # a subfolder: another language
    assert manual.relative(manual.en, "doc/all.html") is None
