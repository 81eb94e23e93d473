"""The GIMP manual reader on tiny packages holding pages trimmed from the real 2.10.34 manual."""
from __future__ import annotations

import pytest
from package_fixtures import make_deb

from corpus import gimp_help
from corpus.io import DataError
from corpus.records import Pair

PAGE = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
  <head>
    <meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
    <title>4.4. {title}</title>
    <link rel="stylesheet" href="gimp-help-plain.css" type="text/css" />
  </head>
  <body>
    <div class="navheader">
      <table width="100%" summary="Navigation header">
        <tr>
          <th colspan="3" align="center">4.4. {title}</th>
        </tr>
        <tr>
          <td width="20%" align="left">
            <a accesskey="p" href="gimp-tool-move.html">
              <img src="images/prev.png" alt="{prev}" />
            </a>
          </td>
          <th width="60%" align="center">{up}</th>
        </tr>
      </table>
      <hr />
    </div>
    <div class="sect2">
{body}
    </div>
    <div class="navfooter">
      <hr />
      <table width="100%" summary="Navigation footer">
        <tr>
          <td width="40%" align="left" valign="top">4.3. {prev_title} </td>
        </tr>
      </table>
    </div>
  </body>
</html>
"""

DE_BODY = """      <div class="titlepage">
        <div>
          <div>
            <h3 class="title"><a id="gimp-tool-crop"></a>4.4. Zuschneiden</h3>
          </div>
        </div>
      </div>
      <a id="idm15009" class="indexterm"></a>
      <div class="figure">
        <a id="idm15018"></a>
        <p class="title">
          <strong>Abbildung 14.127. Das Werkzeug »Zuschneiden« im Werkzeugfenster</strong>
        </p>
        <div class="figure-contents">
          <div class="mediaobject">
            <img src="images/toolbox/toolbox-crop.png" alt="Das Werkzeug »Zuschneiden« im Werkzeugfenster" />
          </div>
        </div>
      </div>
      <br class="figure-break" />
      <p>
    To define the crop area click and drag with the mouse. A highlighted area
    will appear that shows the crop boundaries.
  </p>
      <p>Wenn der Mauszeiger die Form eines Kreuzes annimmt, können Sie auch die Pfeiltasten verwenden, um das \
Umrissrechteck zu verschieben. Halten Sie dabei die <span class="keycap"><strong>Umschalt</strong></span>-Taste \
gedrückt, erfolgt die Verschiebung jeweils in 25-Pixel-Schritten.</p>
      <p>It tends to make the image darker, somewhat similar to <span class="quote">„<span \
class="quote">Multiply</span>“</span> mode.</p>
      <div class="note" style="margin-left: 0.5in; margin-right: 0.5in;">
        <table border="0" summary="Note">
          <tr>
            <td rowspan="2" align="center" valign="top" width="25">
              <img alt="[Anmerkung]" src="images/note.png" />
            </td>
            <th align="left">Anmerkung</th>
          </tr>
          <tr>
            <td align="left" valign="top">
              <p>Die Leinwandgröße wird nach dem Zuschneiden nicht verändert.</p>
            </td>
          </tr>
        </table>
      </div>
        <div class="itemizedlist">
          <ul class="itemizedlist" style="list-style-type: disc; ">
            <li class="listitem">
              <p>Über das Menü <span class="guimenu">Werkzeuge</span> → <span \
class="guimenuitem">Zuschneiden</span>,</p>
            </li>
          </ul>
        </div>
        <pre class="programlisting">
(define (script-fu-zuschneiden bild)  ; das Bild zuschneiden
  (gimp-image-crop bild 10 10 0 0))
        </pre>
        <p>2 × 2</p>"""

EN_BODY = """      <div class="titlepage">
        <div>
          <div>
            <h3 class="title"><a id="gimp-tool-crop"></a>4.4. Crop</h3>
          </div>
        </div>
      </div>
      <a id="idm15121" class="indexterm"></a>
      <div class="figure">
        <a id="idm15130"></a>
        <p class="title">
          <strong>Figure 14.127. Crop tool</strong>
        </p>
        <div class="figure-contents">
          <div class="mediaobject">
            <img src="images/toolbox/toolbox-crop.png" alt="Crop tool" />
          </div>
        </div>
      </div>
      <br class="figure-break" />
      <p>
    To define the crop area click and drag with the mouse. A highlighted area
    will appear that shows the crop boundaries.
  </p>
      <p>
    When the mouse becomes the moving cross-hair, you can use the keyboard
    arrow keys to move the crop rectangle. Holding the
    <span class="keycap"><strong>Shift</strong></span> key down allows to move by increments of 25 pixels.
  </p>
      <p>It tends to make the image darker, somewhat similar to <span class="quote">“<span \
class="quote">Multiply</span>”</span> mode.</p>
      <div class="note" style="margin-left: 0.5in; margin-right: 0.5in;">
        <table border="0" summary="Note">
          <tr>
            <td rowspan="2" align="center" valign="top" width="25">
              <img alt="[Note]" src="images/note.png" />
            </td>
            <th align="left">Note</th>
          </tr>
          <tr>
            <td align="left" valign="top">
              <p>
      The image canvas size isn't changed after cropping.
    </p>
            </td>
          </tr>
        </table>
      </div>
        <div class="itemizedlist">
          <ul class="itemizedlist" style="list-style-type: disc; ">
            <li class="listitem">
              <p>
          From the image menu bar
          <span class="guimenu">Tools</span> → <span class="guimenuitem">Crop</span>,
        </p>
            </li>
          </ul>
        </div>
        <pre class="programlisting">
(define (script-fu-crop image)  ; crop the image
  (gimp-image-crop image 10 10 0 0))
        </pre>
        <p>2 x 2</p>"""

DE_ROOT = "usr/share/gimp/2.0/help/de/"
EN_ROOT = "usr/share/gimp/2.0/help/en/"
DOC = "gimp/gimp-tool-crop.html"


def _page(lang: str, body: str) -> str:
    if lang == "de":
        return PAGE.format(title="Zuschneiden", prev="Zurück", up="4. Transformationswerkzeuge",
                           prev_title="Verschieben", body=body)
    return PAGE.format(title="Crop", prev="Prev", up="4. Transform Tools", prev_title="Move", body=body)


def _packages(tmp_path):
    # gimp-tool-move.html: the English manual has one paragraph more, so the page cannot be paired by position
    de = make_deb(tmp_path / "de.deb", {
        DE_ROOT + "gimp-tool-crop.html": _page("de", DE_BODY),
        DE_ROOT + "gimp-tool-move.html": _page("de", "<p>Verschieben.</p>"),
        DE_ROOT + "images/toolbox/toolbox-crop.png": b"\x89PNG\r\n\x1a\n",
        DE_ROOT + "gimp-help-screen.css": "body {}",
    }, package="gimp-help-de")
    en = make_deb(tmp_path / "en.deb", {
        EN_ROOT + "gimp-tool-crop.html": _page("en", EN_BODY),
        EN_ROOT + "gimp-tool-move.html": _page("en", "<p>Moving.</p><p>A newer paragraph.</p>"),
        EN_ROOT + "images/toolbox/toolbox-crop.png": b"\x89PNG\r\n\x1a\n",
    }, package="gimp-help-en")
    return {"gimp_help_de": de, "gimp_help_en": en}


def test_pairs_by_page_and_block_position(tmp_path):
    stats: dict[str, int] = {}
    pairs = list(gimp_help.read_pairs(_packages(tmp_path), stats))
    assert pairs == [
        Pair("Zuschneiden", "Crop", "phrase", "gimp_help", DOC),  # the section number "4.4." is cut off
        Pair("Das Werkzeug »Zuschneiden« im Werkzeugfenster", "Crop tool", "phrase", "gimp_help", DOC),
        # a two-sentence paragraph, aligned by align_block; the untranslated one before it is dropped
        Pair("Wenn der Mauszeiger die Form eines Kreuzes annimmt, können Sie auch die Pfeiltasten verwenden, um das "
             "Umrissrechteck zu verschieben.",
             "When the mouse becomes the moving cross-hair, you can use the keyboard arrow keys to move the crop "
             "rectangle.", "sentence", "gimp_help", DOC),
        Pair("Halten Sie dabei die Umschalt-Taste gedrückt, erfolgt die Verschiebung jeweils in 25-Pixel-Schritten.",
             "Holding the Shift key down allows to move by increments of 25 pixels.", "sentence", "gimp_help", DOC),
        Pair("Anmerkung", "Note", "phrase", "gimp_help", DOC),
        Pair("Die Leinwandgröße wird nach dem Zuschneiden nicht verändert.",
             "The image canvas size isn't changed after cropping.", "sentence", "gimp_help", DOC),  # once, not per <td>
        Pair("Über das Menü Werkzeuge → Zuschneiden,", "From the image menu bar Tools → Crop,", "phrase",
             "gimp_help", DOC),  # once, not per <li>
        # a listing is paired line by line
        Pair("(define (script-fu-zuschneiden bild) ; das Bild zuschneiden", "(define (script-fu-crop image) ; crop "
             "the image", "phrase", "gimp_help", DOC),
        Pair("(gimp-image-crop bild 10 10 0 0))", "(gimp-image-crop image 10 10 0 0))", "phrase", "gimp_help", DOC),
    ]
    assert stats["files_gimp_help_de"] == stats["files_gimp_help_en"] == 2  # images and CSS are no pages
    assert stats["files_paired"] == 1
    assert stats["files_block_mismatch"] == 1
    assert stats["dropped_blocks_of_mismatched_files"] == 1
    assert stats["dropped_identical"] == 2  # untranslated, once with other quotation marks
    assert stats["dropped_no_letters"] == 1  # "2 × 2"
    assert stats["pairs"] == len(pairs) == stats["pairs_phrase"] + stats["pairs_sentence"]


def test_navigation_is_skipped(tmp_path):
    texts = {p.de for p in gimp_help.read_pairs(_packages(tmp_path))}
    assert not any("Transformationswerkzeuge" in t or "Verschieben" in t for t in texts)


def test_strip_label():
    assert gimp_help.strip_label("I. Erste Schritte", "I. Getting Started") == ("Erste Schritte", "Getting Started")
    assert gimp_help.strip_label("Tabelle 2.1. Farben", "Table 2.1. Colors") == ("Farben", "Colors")
    assert gimp_help.strip_label("1.1. Einen Fehler suchen", "Find a Bug") == ("Einen Fehler suchen", "Find a Bug")
    # different numbers: not a shared label; a lone "3." may be a German date
    assert gimp_help.strip_label("Tabelle 2.1. x", "Table 2.2. y") == ("Tabelle 2.1. x", "Table 2.2. y")
    assert gimp_help.strip_label("3. Mai", "May 3") == ("3. Mai", "May 3")


def test_corrupt_package_raises(tmp_path):
    files = _packages(tmp_path)
    files["gimp_help_en"].write_bytes(b"PK\x03\x04 not a deb")
    with pytest.raises(DataError):
        list(gimp_help.read_pairs(files))


def test_page_not_utf8_raises(tmp_path):
    files = _packages(tmp_path)
    files["gimp_help_de"] = make_deb(tmp_path / "bad.deb", {DE_ROOT + "gimp-tool-crop.html": b"<p>Gr\xf6\xdfe</p>"})
    with pytest.raises(DataError, match="not UTF-8"):
        list(gimp_help.read_pairs(files))
