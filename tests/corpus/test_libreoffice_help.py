"""The LibreOffice help reader on tiny packages holding pages trimmed from the real 7.4.7 help."""
from __future__ import annotations

import pytest
from package_fixtures import make_deb

from corpus import libreoffice_help
from corpus.io import DataError
from corpus.records import Pair

PAGE = """<!DOCTYPE html>
<html lang="{lang}" dir="ltr">
<head>
<base href="../../../../">
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>{title}</title>
<script type="text/javascript" src="help.js" defer></script>
</head>
<body>
<header id="TopLeftHeader"><a class="logo" href="{lang}/text/shared/05/new_help.html"><p dir="auto">{header}</p></a>\
</header>
<div id="DisplayArea" itemprop="softwareHelp" itemscope="true">
<a name="bm_id3152887"></a><meta itemprop="keywords" content="{title}">
{body}
</div>
<footer><div id="DEBUG" class="debug">
<h3 class="bug">Help content debug info:</h3>
<p dir="auto">This page is: <a href="https://opengrok.libreoffice.org/xref/help/source/x.xhp">/x.xhp</a></p>
<p id="bm_module" dir="auto"></p>
</div></footer>
</body>
</html>
"""

DE_BODY = """<h1 id="hd_id3152887" dir="auto">
<a name="autocorr_except"></a>Hinzufügen von Ausnahmen zur AutoKorrektur-Liste</h1>
      <p id="par_id3154254" class="paragraph" dir="auto">Sie können verhindern, dass AutoKorrektur bestimmte \
Abkürzungen korrigiert. Das gilt auch für Wörter mit gemischter Groß- und Kleinschreibung.</p>
      <ol itemprop="HowTo" itemscope="true" dir="auto">
         <li itemprop="itemListElement" itemscope="true" dir="auto">
            <p id="par_id3155576" class="listitem" dir="auto">Wählen Sie <span class="menuitem">Extras – \
AutoKorrektur – AutoKorrektur-Optionen…</span> – Register: <span class="menuitem">Ausnahmen</span>.</p>
         </li>
      </ol>
      <table border="1" class="border" cellpadding="0" cellspacing="0" dir="auto">
      <tr>
      <td class="tableheadcell"><p id="par_id3150502" class="tableheadintable" dir="auto">Ergebnis</p></td>
      <td><p id="par_id3150503" class="tablecontentintable" dir="auto">1.234</p></td>
      </tr>
      </table>
      <p id="par_id3149000" class="paragraph" dir="auto">LibreOffice Basic IDE</p>
      <p id="par_id3149001" class="paragraph" dir="auto">Nur in der deutschen Hilfe.</p>
      <p id="par_id3149002" class="paragraph" dir="auto">Geben Sie <span class="emph">&lt;?&gt; &amp; x</span> \
ein.</p>
      <div class="tip">
<div class="noteicon" dir="auto"><img src="media/icon-themes/res/helpimg/tip.svg" alt="Tippsymbol"></div>
<div class="notetext"><p dir="auto">Um eine Ersetzung rückgängig zu machen, drücken Sie \
<span id="swlnsystextswriterguideautocorr_exceptxml_1" class="switchinline"><span hidden="true" \
id="MACtextswriterguideautocorr_exceptxml_1" class="MAC">Befehl</span><span hidden="true" \
id="defaulttextswriterguideautocorr_exceptxml_1">Strg</span></span>+Z.</p></div>
</div>
<div class="bascode" itemscope="true"><pre dir="auto"><code class="language-visual-basic line-numbers">
Sub ExampleMsgBox
 MsgBox "Ein Fehler ist aufgetreten."
End Sub
</code></pre></div>"""

EN_BODY = """<h1 id="hd_id3152887" dir="auto">
<a name="autocorr_except"></a>Adding Exceptions to the AutoCorrect List
</h1>
      <p id="par_id3154254" class="paragraph" dir="auto">You can prevent AutoCorrect from correcting specific \
abbreviations. This also applies to words that have mixed capital letters and lowercase letters. </p>
      <ol itemprop="HowTo" itemscope="true" dir="auto">
         <li itemprop="itemListElement" itemscope="true" dir="auto">
            <p id="par_id3155576" class="listitem" dir="auto">Choose <span class="menuitem">Tools - AutoCorrect \
- AutoCorrect Options</span>, and then click the <span class="menuitem">Exceptions</span> tab.</p>
         </li>
      </ol>
      <table border="1" class="border" cellpadding="0" cellspacing="0" dir="auto">
      <tr>
      <td class="tableheadcell"><p id="par_id3150502" class="tableheadintable" dir="auto">Result</p></td>
      <td><p id="par_id3150503" class="tablecontentintable" dir="auto">1,234</p></td>
      </tr>
      </table>
      <p id="par_id3149000" class="paragraph" dir="auto">LibreOffice Basic IDE</p>
      <p id="par_id3149002" class="paragraph" dir="auto">Type <span class="emph">&lt;?&gt; &amp; x</span>.</p>
      <div class="tip">
<div class="noteicon" dir="auto"><img src="media/icon-themes/res/helpimg/tip.svg" alt="Tip Icon"></div>
<div class="notetext"><p dir="auto">To undo a replacement, press <span \
id="swlnsystextswriterguideautocorr_exceptxml_1" class="switchinline"><span hidden="true" \
id="MACtextswriterguideautocorr_exceptxml_1" class="MAC">Command
</span><span hidden="true" id="defaulttextswriterguideautocorr_exceptxml_1">Ctrl</span></span>+Z.</p></div>
</div>
<div class="bascode" itemscope="true"><pre dir="auto"><code class="language-visual-basic line-numbers">
Sub ExampleMsgBox
 MsgBox "An error occurred."
End Sub
</code></pre></div>"""

DE_ROOT = "usr/share/libreoffice/help/de/"
EN_ROOT = "usr/share/libreoffice/help/en-US/"
PAGE_PATH = "text/swriter/guide/autocorr_except.html"
DOC = "libreoffice/text/swriter/guide/autocorr_except.html"


def _packages(tmp_path, de_body=DE_BODY):
    de = make_deb(tmp_path / "de.deb", {
        DE_ROOT + PAGE_PATH: PAGE.format(lang="de", title="Ausnahmen", header="Hilfe für LibreOffice 7.4",
                                         body=de_body),
        DE_ROOT + "contents.js": "var x = 1;",
    }, package="libreoffice-help-de")
    en = make_deb(tmp_path / "en.deb", {
        EN_ROOT + PAGE_PATH: PAGE.format(lang="en-US", title="Exceptions", header="LibreOffice 7.4 Help",
                                         body=EN_BODY),
        EN_ROOT + "text/shared/only_english.html": PAGE.format(lang="en-US", title="x", header="x",
                                                               body='<p id="par_id1">English only.</p>'),
    }, package="libreoffice-help-en-us")
    return {"libreoffice_help_de": de, "libreoffice_help_en": en}


def test_pairs_by_page_and_element_id(tmp_path):
    stats: dict[str, int] = {}
    pairs = list(libreoffice_help.read_pairs(_packages(tmp_path), stats))
    assert pairs == [
        Pair("Hinzufügen von Ausnahmen zur AutoKorrektur-Liste", "Adding Exceptions to the AutoCorrect List",
             "phrase", "libreoffice_help", DOC),
        # one paragraph, two sentences: aligned by align_block
        Pair("Sie können verhindern, dass AutoKorrektur bestimmte Abkürzungen korrigiert.",
             "You can prevent AutoCorrect from correcting specific abbreviations.", "sentence", "libreoffice_help",
             DOC),
        Pair("Das gilt auch für Wörter mit gemischter Groß- und Kleinschreibung.",
             "This also applies to words that have mixed capital letters and lowercase letters.", "sentence",
             "libreoffice_help", DOC),
        # inline markup gives its text; the <li> around the <p> adds nothing
        Pair("Wählen Sie Extras – AutoKorrektur – AutoKorrektur-Optionen… – Register: Ausnahmen.",
             "Choose Tools - AutoCorrect - AutoCorrect Options, and then click the Exceptions tab.", "sentence",
             "libreoffice_help", DOC),
        Pair("Ergebnis", "Result", "phrase", "libreoffice_help", DOC),  # once, though its <td> is a block too
        Pair("Geben Sie <?> & x ein.", "Type <?> & x.", "sentence", "libreoffice_help", DOC),  # entities decoded
        # a note box paragraph has no id: paired by position; the inline OS switch keeps the default "Strg"
        Pair("Um eine Ersetzung rückgängig zu machen, drücken Sie Strg+Z.", "To undo a replacement, press Ctrl+Z.",
             "sentence", "libreoffice_help", DOC),
        # a code listing is paired line by line; its untranslated lines are dropped
        Pair('MsgBox "Ein Fehler ist aufgetreten."', 'MsgBox "An error occurred."', "sentence", "libreoffice_help",
             DOC),
    ]
    assert stats["files_paired"] == 1
    assert stats["files_only_en"] == 1
    assert stats["files_libreoffice_help_de"] == 1  # the .js file is not a page
    assert stats["dropped_id_only_de"] == 1  # "Nur in der deutschen Hilfe."
    assert stats["dropped_identical"] == 1  # "LibreOffice Basic IDE"
    assert stats["dropped_no_letters"] == 1  # "1.234" / "1,234"
    assert stats["dropped_code_lines"] == 2
    assert stats["pairs"] == len(pairs) == stats["pairs_phrase"] + stats["pairs_sentence"]
    assert stats["align_blocks"] >= 1


def test_chrome_is_skipped(tmp_path):
    texts = {p.de for p in libreoffice_help.read_pairs(_packages(tmp_path))}
    assert not any("Hilfe für" in t or "This page" in t or "Befehl" in t for t in texts)


def test_elements_without_id_need_the_same_tags(tmp_path):
    """When the id-less elements differ (here an extra <h2> on the German page), they are not paired."""
    stats: dict[str, int] = {}
    de_body = DE_BODY.replace('<div class="tip">', '<h2 dir="auto">Extra</h2><div class="tip">')
    pairs = list(libreoffice_help.read_pairs(_packages(tmp_path, de_body), stats))
    assert not any("Strg" in p.de for p in pairs)
    assert stats["pages_without_id_mismatch"] == 1
    assert any(p.de == "Ergebnis" for p in pairs)  # elements with id still are


def test_corrupt_package_raises(tmp_path):
    files = _packages(tmp_path)
    files["libreoffice_help_de"].write_bytes(b"!<arch>\nnot really a package")
    with pytest.raises(DataError):
        list(libreoffice_help.read_pairs(files))


def test_missing_source_raises(tmp_path):
    files = _packages(tmp_path)
    del files["libreoffice_help_en"]
    with pytest.raises(DataError, match="libreoffice_help_en"):
        list(libreoffice_help.read_pairs(files))


def test_no_common_page_raises(tmp_path):
    files = _packages(tmp_path)
    files["libreoffice_help_de"] = make_deb(tmp_path / "empty.deb", {"usr/share/doc/x/copyright": "x"})
    with pytest.raises(DataError, match="no help page"):
        list(libreoffice_help.read_pairs(files))
