"""The GNOME help reader on tiny packages cut from the real pages (Mallard from gnome-user-docs, DocBook from
aisleriot and gnome-devel-docs' accessibility guide), English (C) and German (de) editions as itstool writes them.
Lines longer than the project limit are wrapped at spaces, which the reader collapses like any layout whitespace."""
from __future__ import annotations

from collections import Counter

import pytest
from package_fixtures import make_deb

from corpus import gnome_help
from corpus.gnome_help import paired_blocks, read_pairs
from corpus.io import DataError
from corpus.records import Pair
from corpus.sources import SOURCES, sources_for
from corpus.xml_blocks import AUTOTEXT, parse_page

# --- Mallard (gnome-help net-wireless-connect.page), trimmed, plus a key sequence, a listing, an editor's comment,
# an untranslated paragraph, a link the renderer fills in, icons with and without fallback text, and a table.
PAGE_EN = """<page xmlns="http://projectmallard.org/1.0/"
      xmlns:if="http://projectmallard.org/if/1.0/"
      xmlns:its="http://www.w3.org/2005/11/its"
      type="topic" style="task"
      id="net-wireless-connect">

  <info>
    <link type="guide" xref="net-wireless" group="#first"/>
    <revision pkgversion="43" date="2022-09-10" status="candidate"/>
    <credit type="author">
      <name>GNOME Documentation Project</name>
      <email>gnome-doc-list@gnome.org</email>
    </credit>
    <desc>Get on the internet — wirelessly.</desc>
    <include href="legal.xml" xmlns="http://www.w3.org/2001/XInclude"/>
  </info>

<title>Connect to a wireless network</title>

<p>If you have a wireless-enabled computer, you can connect to a wireless
 network that is within range to get access to the internet.</p>

<comment><cite date="2012-02-19">Michael Hill</cite><p>Check this for 3.4.</p></comment>

<steps>
  <item>
    <p>Open the <gui xref="shell-introduction#systemmenu">system menu</gui> from the right
    side of the top bar.</p>
  </item>
  <item>
    <p>Select
    <gui><media its:translate="no" type="image" mime="image/svg" src="figures/network-wireless-disabled-symbolic.svg"/>
    Wi-Fi</gui>. The Wi-Fi section of the menu will expand.</p>
  </item>
  <item>
    <if:choose>
    <if:when test="platform:gnome-classic">
    <p>If the connection is successful, the icon will change to a dot with
    several curved bars above it
    (<media its:translate="no" type="image" mime="image/svg"
    src="figures/classic-topbar-network-wireless-strength-excellent.svg" width="28" height="28"/>). More bars
    indicate a stronger connection to the network.</p>
    </if:when>
    </if:choose>
  </item>
</steps>

<p>Press <keyseq><key>Ctrl</key><key>Alt</key><key>T</key></keyseq> or choose
<guiseq><gui>Files</gui><gui>Open</gui></guiseq>.</p>

<code mime="text/x-python">print("Wi-Fi")</code>
<screen>$ nmcli radio wifi on</screen>
<p><cmd>nmcli radio wifi on</cmd></p>

<section id="troubleshooting">
  <title>Troubleshooting</title>
  <p>See <link xref="net-wireless-troubleshooting" /> for more help. You could have
  entered the wrong password.</p>
  <p>Click the <media its:translate="no" type="image" src="figures/emblem-system-symbolic.svg"><span
  its:translate="yes">settings</span></media> button.</p>
  <table>
    <tr><td><p>Wi-Fi</p></td><td><p>Wireless network</p></td></tr>
  </table>
</section>

</page>
"""
PAGE_DE = """<?xml version="1.0" encoding="utf-8"?>
<page xmlns="http://projectmallard.org/1.0/" xmlns:if="http://projectmallard.org/if/1.0/"
xmlns:its="http://www.w3.org/2005/11/its" type="topic" style="task" id="net-wireless-connect" xml:lang="de">

  <info>
    <link type="guide" xref="net-wireless" group="#first"/>
    <revision pkgversion="43" date="2022-09-10" status="candidate"/>
    <credit type="author">
      <name>GNOME-Dokumentationsprojekt</name>
      <email>gnome-doc-list@gnome.org</email>
    </credit>
    <desc>Gehen Sie ins Internet – drahtlos.</desc>
    <include xmlns="http://www.w3.org/2001/XInclude" href="legal.xml"/>

    <mal:credit xmlns:mal="http://projectmallard.org/1.0/" type="translator copyright">
      <mal:name>Christian Kirbach</mal:name>
      <mal:email>christian.kirbach@gmail.com</mal:email>
      <mal:years>2011-2021.</mal:years>
    </mal:credit>
  </info>

<title>Verbinden mit Funknetzwerken</title>

<p>Falls mit Ihrem Rechner Funknetzwerkverbindungen möglich sind, können Sie sich mit einem verfügbaren Funknetzwerk
verbinden, um auf das Internet zugreifen zu können.</p>

<comment><cite date="2012-02-19">Michael Hill</cite><p>Check this for 3.4.</p></comment>

<steps>
  <item>
    <p>Öffnen Sie das <gui xref="shell-introduction#systemmenu">Systemmenü</gui> auf der rechten Seite der obersten
    Leiste.</p>
  </item>
  <item>
    <p>Wählen Sie <gui><media its:translate="no" type="image" mime="image/svg"
    src="figures/network-wireless-disabled-symbolic.svg"/> WLAN</gui>. Anschließend wird sich der WLAN-Bereich des
    Menüs erweitern.</p>
  </item>
  <item>
    <if:choose>
    <if:when test="platform:gnome-classic">
    <p>Wenn die Verbindung erfolgreich war, ändert sich das Symbol zu einem Punkt mit mehreren geschwungenen Balken
    darüber (<media its:translate="no" type="image" mime="image/svg"
    src="figures/classic-topbar-network-wireless-strength-excellent.svg" width="28" height="28"/>). Mehr Balken stehen
    für eine stärkere Verbindung zum Netzwerk.</p>
    </if:when>
    </if:choose>
  </item>
</steps>

<p>Drücken Sie <keyseq><key>Strg</key><key>Alt</key><key>T</key></keyseq> oder wählen Sie
<guiseq><gui>Dateien</gui><gui>Öffnen</gui></guiseq>.</p>

<code mime="text/x-python">print("Wi-Fi")</code>
<screen>$ nmcli radio wifi on</screen>
<p><cmd>nmcli radio wifi on</cmd></p>

<section id="troubleshooting">
  <title>Fehlerbehebung</title>
  <p>Lesen Sie <link xref="net-wireless-troubleshooting"/> für weitere Hilfe. Sie könnten ein falsches Passwort
  eingegeben haben.</p>
  <p>Klicken Sie auf den Knopf <media its:translate="no" type="image" src="figures/emblem-system-symbolic.svg"><span
  its:translate="yes">Einstellungen</span></media>.</p>
  <table>
    <tr><td><p>WLAN</p></td><td><p>Funknetzwerk</p></td></tr>
  </table>
</section>

</page>
"""
LEGAL_EN = """<license xmlns="http://projectmallard.org/1.0/"
         href="https://creativecommons.org/licenses/by-sa/3.0/">
  <p>This work is licensed under a <link href="https://creativecommons.org/licenses/by-sa/3.0/">Creative
  Commons Attribution-ShareAlike 3.0 Unported License</link>.</p>
</license>
"""
LEGAL_DE = """<?xml version="1.0" encoding="utf-8"?>
<license xmlns="http://projectmallard.org/1.0/" href="https://creativecommons.org/licenses/by-sa/3.0/">
  <p>Dieses Werk wird unter einer <link href="https://creativecommons.org/licenses/by-sa/3.0/">Creative Commons
  Attribution-ShareAlike 3.0 Unported License</link> verbreitet.</p>
</license>
"""
MALLARD_PAIRS = [
    ("Gehen Sie ins Internet – drahtlos.", "Get on the internet — wirelessly."),
    ("Verbinden mit Funknetzwerken", "Connect to a wireless network"),
    ("Falls mit Ihrem Rechner Funknetzwerkverbindungen möglich sind, können Sie sich mit einem verfügbaren "
     "Funknetzwerk verbinden, um auf das Internet zugreifen zu können.",
     "If you have a wireless-enabled computer, you can connect to a wireless network that is within range to get "
     "access to the internet."),
    ("Öffnen Sie das Systemmenü auf der rechten Seite der obersten Leiste.",
     "Open the system menu from the right side of the top bar."),
    ("Wählen Sie WLAN.", "Select Wi-Fi."),
    ("Anschließend wird sich der WLAN-Bereich des Menüs erweitern.", "The Wi-Fi section of the menu will expand."),
    # the sentence before it held an icon that stands for a word: dropped
    ("Mehr Balken stehen für eine stärkere Verbindung zum Netzwerk.",
     "More bars indicate a stronger connection to the network."),
    ("Drücken Sie Strg+Alt+T oder wählen Sie Dateien ▸ Öffnen.", "Press Ctrl+Alt+T or choose Files ▸ Open."),
    ("Fehlerbehebung", "Troubleshooting"),
    # "See <link xref/> for more help." has no text for the link: that sentence is dropped, the next one kept
    ("Sie könnten ein falsches Passwort eingegeben haben.", "You could have entered the wrong password."),
    ("Klicken Sie auf den Knopf Einstellungen.", "Click the settings button."),
    ("WLAN", "Wi-Fi"),
    ("Funknetzwerk", "Wireless network"),
]
LEGAL_PAIRS = [
    ("Dieses Werk wird unter einer Creative Commons Attribution-ShareAlike 3.0 Unported License verbreitet.",
     "This work is licensed under a Creative Commons Attribution-ShareAlike 3.0 Unported License."),
]

# --- DocBook (aisleriot index.docbook + one game file), trimmed: internal entities (&app; with markup), the
# legal notice as an external entity inside <bookinfo>, an index term, a menu choice, an XInclude; the German
# edition has the entities expanded and one paragraph left in English.
DOCBOOK_EN = """<?xml version="1.0" encoding="utf-8" ?>
<!DOCTYPE book PUBLIC "-//OASIS//DTD DocBook XML V4.3//EN"
               "http://www.oasis-open.org/docbook/xml/4.3/docbookx.dtd" [
<!ENTITY % local.common.attrib "xmlns:xi  CDATA  #FIXED 'http://www.w3.org/2003/XInclude'">
<!ENTITY legal SYSTEM "legal.xml">
<!ENTITY app "<application>AisleRiot</application>">
<!ENTITY appname "AisleRiot">
]>
<book id="index" lang="en" xmlns:xi="http://www.w3.org/2003/XInclude">
  <bookinfo>
    <title>&app; Manual</title>
    <abstract role="description">
      <para>
    AisleRiot is a collection of over 80 card games programmed
    in GNOME's scripting language, Scheme.
      </para>
    </abstract>
    <copyright><year>2001</year><holder>Rosanna Yuen</holder></copyright>
    &legal;
    <revhistory><revision><revnumber>&appname; Manual V3.2</revnumber><date>September 2011</date>
      <revdescription><para role="author">Rosanna Yuen</para></revdescription></revision></revhistory>
  </bookinfo>

<chapter id="intro">
    <title>Introduction</title>
    <indexterm zone="index"><primary>AisleRiot</primary></indexterm>
    <para>
&app; (also known as Solitaire or sol) is a collection of card games
which are easy to play with the aid of a mouse.
</para>
    <para>
  To enable this way of moving cards, choose <menuchoice><guimenu>Control</guimenu><guimenuitem>Click to
  move</guimenuitem></menuchoice>.
    </para>
</chapter>
<chapter id="games">
  <title>Games</title>
  <xi:include href="klondike.xml" />
</chapter>
</book>
"""
DOCBOOK_DE = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE book PUBLIC "-//OASIS//DTD DocBook XML V4.3//EN" "http://www.oasis-open.org/docbook/xml/4.3/docbookx.dtd" [
<!ENTITY % local.common.attrib "xmlns:xi  CDATA  #FIXED 'http://www.w3.org/2003/XInclude'">
<!ENTITY app "<application>AisleRiot</application>">
<!ENTITY appname "AisleRiot">
]>
<book xmlns:xi="http://www.w3.org/2003/XInclude" id="index" lang="aisleriot-de">
  <bookinfo>
    <title><application>AisleRiot</application>-Handbuch</title>
    <abstract role="description">
      <para>AisleRiot ist eine Sammlung aus über 80 Kartenspielen, die in der GNOME-Skriptsprache Scheme programmiert
      wurden.</para>
    </abstract>
    <copyright><year>2001</year> <holder>Rosanna Yuen</holder></copyright>
    <legalnotice id="legalnotice"><para>Es ist gestattet, dieses Dokument zu kopieren.</para></legalnotice>
    <revhistory><revision><revnumber>AisleRiot-Handbuch V3.2</revnumber><date>September 2011</date>
      <revdescription><para role="author">Rosanna Yuen</para></revdescription></revision></revhistory>
  </bookinfo>

<chapter id="intro">
    <title>Einführung</title>
    <indexterm zone="index"><primary>AisleRiot</primary></indexterm>
    <para><application>AisleRiot</application> (auch als Solitär oder Sol bekannt) ist eine Sammlung von
    Kartenspielen, die mit Hilfe der Maus leicht spielbar sind.</para>
    <para>Um diese Möglichkeit des Verschiebens von Karten zu aktivieren, wählen Sie
    <menuchoice><guimenu>Steuerung</guimenu><guimenuitem>Legen per Klick</guimenuitem></menuchoice>.</para>
</chapter>
<chapter id="games">
  <title>Spiele</title>
  <xi:include href="klondike.xml"/>
</chapter>
</book>
"""
DOCBOOK_LEGAL_EN = """<?xml version="1.0" encoding="utf-8" ?>
  <legalnotice id="legalnotice">
    <para>
      Permission is granted to copy this document.
         </para>
  </legalnotice>
"""
GAME_EN = """<?xml version="1.0" encoding="utf-8" ?>
<!DOCTYPE refentry PUBLIC "-//OASIS//DTD DocBook XML V4.3//EN"
                   "http://www.oasis-open.org/docbook/xml/4.3/docbookx.dtd" [
]>
<sect1 id="Klondike"><!--<sect1info>
    <author><firstname>Rosanna</firstname><surname>Yuen</surname></author>
  </sect1info>-->

  <title>Klondike</title>

  <para>Written by Jonathan Blandford</para>

          <sect2><title>Setup</title>
  <informaltable>
    <tgroup cols="2"><tbody>
    <row>
      <entry>Type of Deck</entry>
      <entry>Standard Deck</entry>
    </row>
    <row>
      <entry>Waste</entry>
      <entry>
        Play is from the Stock.  The top card is available for play.
      </entry>
    </row>
      </tbody>
    </tgroup>
  </informaltable>
          </sect2>
        <sect2><title>Rules</title>
  <para>
    Double clicking on a foundation card will move all the cards that
    can go there.
  </para>
          </sect2>
</sect1>
"""
GAME_DE = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE refentry PUBLIC "-//OASIS//DTD DocBook XML V4.3//EN" "http://www.oasis-open.org/docbook/xml/4.3/docbookx.dtd">
<sect1 id="Klondike"><!--<sect1info>
    <author><firstname>Rosanna</firstname><surname>Yuen</surname></author>
  </sect1info>-->

  <title>Klondike</title>

  <para>Geschrieben von Jonathan Blandford</para>

          <sect2><title>Spielaufbau</title>
  <informaltable>
    <tgroup cols="2"><tbody>
    <row>
      <entry>Art des Kartensatzes</entry>
      <entry>Standard-Kartensatz</entry>
    </row>
    <row>
      <entry>Ablage</entry>
      <entry>Es wird vom Talon gespielt. Die oberste Karte ist für das Spiel verfügbar.</entry>
    </row>
      </tbody>
    </tgroup>
  </informaltable>
          </sect2>
        <sect2><title>Regeln</title>
  <para>
    Double clicking on a foundation card will move all the cards that
    can go there.
  </para>
          </sect2>
</sect1>
"""
DOCBOOK_PAIRS = [  # index.docbook (the legal notice in <bookinfo> and the revision history give nothing)
    ("AisleRiot-Handbuch", "AisleRiot Manual"),
    ("AisleRiot ist eine Sammlung aus über 80 Kartenspielen, die in der GNOME-Skriptsprache Scheme programmiert "
     "wurden.",
     "AisleRiot is a collection of over 80 card games programmed in GNOME's scripting language, Scheme."),
    ("Einführung", "Introduction"),
    ("AisleRiot (auch als Solitär oder Sol bekannt) ist eine Sammlung von Kartenspielen, die mit Hilfe der Maus "
     "leicht spielbar sind.",
     "AisleRiot (also known as Solitaire or sol) is a collection of card games which are easy to play with the "
     "aid of a mouse."),
    ("Um diese Möglichkeit des Verschiebens von Karten zu aktivieren, wählen Sie Steuerung ▸ Legen per Klick.",
     "To enable this way of moving cards, choose Control ▸ Click to move."),
    ("Spiele", "Games"),
]
GAME_PAIRS = [  # klondike.xml: its title is the same in both ("Klondike"), its rules paragraph untranslated
    ("Geschrieben von Jonathan Blandford", "Written by Jonathan Blandford"),
    ("Spielaufbau", "Setup"),
    ("Art des Kartensatzes", "Type of Deck"),
    ("Standard-Kartensatz", "Standard Deck"),
    ("Ablage", "Waste"),
    ("Es wird vom Talon gespielt.", "Play is from the Stock."),
    ("Die oberste Karte ist für das Spiel verfügbar.", "The top card is available for play."),
    ("Regeln", "Rules"),
]

# --- DocBook split into external entities on the English side only (gnome-devel-docs' accessibility guide):
# itstool writes the German edition as one file.
A11Y_EN = """<?xml version="1.0"?>
<!DOCTYPE book PUBLIC "-//OASIS//DTD DocBook XML V4.1.2//EN"
"http://www.oasis-open.org/docbook/xml/4.1.2/docbookx.dtd" [
  <!ENTITY gnomeversion "2.24">
  <!ENTITY gtest SYSTEM "gtest.xml">
]><?db.chunk.max_depth 4?>
<book id="index">
<title>GNOME Accessibility Developers Guide</title>
&gtest;
</book>
"""
A11Y_GTEST_EN = """<chapter id="gtest" status="draft">
<title>Testing</title>
<para>
There are several points of review to conduct before declaring an application accessible.
Over the course of development you may want to consider automated testing techniques.
<ulink url="http://ldtp.freedesktop.org/">LDTP</ulink>, for example, may complement your testing plan.
</para>
<itemizedlist><listitem><para>Press <keycombo><keycap>Ctrl</keycap><keycap>F1</keycap></keycombo>.</para>
</listitem></itemizedlist>
<programlisting>gnome-a11y-test --all</programlisting>
</chapter>
"""
A11Y_DE = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE book PUBLIC "-//OASIS//DTD DocBook XML V4.1.2//EN"
  "http://www.oasis-open.org/docbook/xml/4.1.2/docbookx.dtd" [
  <!ENTITY gnomeversion "2.24">
  <!ENTITY gtest SYSTEM "gtest.xml">
]>
<?db.chunk.max_depth 4?>
<book id="index">
<title>GNOME-Handbuch zur Barrierefreiheit für Entwickler</title>
<chapter id="gtest" status="draft">
<title>Testen</title>
<para>Es gibt mehrere Punkte, die überprüft werden sollten, bevor eine Anwendung als barrierefrei gilt. Im Laufe der
Entwicklung sollten Sie automatisierte Testverfahren in Betracht ziehen. <ulink
url="http://ldtp.freedesktop.org/">LDTP</ulink> kann beispielsweise Ihren Testplan ergänzen.</para>
<itemizedlist><listitem><para>Drücken Sie <keycombo><keycap>Strg</keycap><keycap>F1</keycap></keycombo>.</para>
</listitem></itemizedlist>
<programlisting>gnome-a11y-test --all</programlisting>
</chapter>
</book>
"""
A11Y_PAIRS = [
    ("GNOME-Handbuch zur Barrierefreiheit für Entwickler", "GNOME Accessibility Developers Guide"),
    ("Testen", "Testing"),
    ("Es gibt mehrere Punkte, die überprüft werden sollten, bevor eine Anwendung als barrierefrei gilt.",
     "There are several points of review to conduct before declaring an application accessible."),
    ("Im Laufe der Entwicklung sollten Sie automatisierte Testverfahren in Betracht ziehen.",
     "Over the course of development you may want to consider automated testing techniques."),
    ("LDTP kann beispielsweise Ihren Testplan ergänzen.", "LDTP, for example, may complement your testing plan."),
    ("Drücken Sie Strg+F1.", "Press Ctrl+F1."),
]

HELP = "usr/share/help/"


def _user_docs(tmp_path, name="gnome-user-docs.deb"):
    return make_deb(tmp_path / name, {
        HELP + "C/gnome-help/net-wireless-connect.page": PAGE_EN,
        HELP + "de/gnome-help/net-wireless-connect.page": PAGE_DE,
        HELP + "C/gnome-help/legal.xml": LEGAL_EN,
        HELP + "de/gnome-help/legal.xml": LEGAL_DE,
        HELP + "C/gnome-help/figures/network-wireless.svg": "<svg/>",  # not a page
        HELP + "C/gnome-help/net-new.page": PAGE_EN.replace("net-wireless-connect", "net-new"),  # no German
        HELP + "fr/gnome-help/net-wireless-connect.page": PAGE_DE,  # other languages are not read
    })


def _aisleriot(tmp_path):
    return make_deb(tmp_path / "aisleriot.deb", {
        HELP + "C/aisleriot/index.docbook": DOCBOOK_EN,
        HELP + "C/aisleriot/legal.xml": DOCBOOK_LEGAL_EN,
        HELP + "C/aisleriot/klondike.xml": GAME_EN,
        HELP + "de/aisleriot/index.docbook": DOCBOOK_DE,
        HELP + "de/aisleriot/klondike.xml": GAME_DE,
        HELP + "C/accessibility-devel-guide/index.docbook": A11Y_EN,
        HELP + "C/accessibility-devel-guide/gtest.xml": A11Y_GTEST_EN,
        HELP + "de/accessibility-devel-guide/index.docbook": A11Y_DE,
    })


def _texts(pairs):
    return [(p.de, p.en) for p in pairs]


def test_mallard_pairs_doc_ids_and_drops(tmp_path):
    stats: dict[str, int] = {}
    pairs = list(read_pairs({"docs": _user_docs(tmp_path)}, stats, keys=["docs"]))
    page = [p for p in pairs if p.doc == "gnome-help/gnome-help/net-wireless-connect.page"]
    legal = [p for p in pairs if p.doc == "gnome-help/gnome-help/legal.xml"]
    assert len(page) + len(legal) == len(pairs)
    assert _texts(page) == MALLARD_PAIRS
    assert _texts(legal) == LEGAL_PAIRS
    assert all(p.source == "gnome_help" for p in pairs)
    assert page[0].kind == "sentence" and page[1].kind == "phrase" and page[-1].kind == "phrase"
    assert not any(AUTOTEXT in p.de or AUTOTEXT in p.en for p in pairs)
    # listings, the comment, credits and the figure give nothing
    assert not any("nmcli" in p.en or "print" in p.en or "Michael" in p.en or "Check" in p.en for p in pairs)
    assert stats["files_paired"] == 2 and stats["files_unpaired"] == 1  # net-new.page has no German edition
    assert stats["dropped_untranslated"] == 1  # the <cmd> paragraph
    assert stats["dropped_autotext_sentences"] == 2  # the icon-only sentence, the filled-in link
    assert stats["pairs"] == len(pairs) == stats["pairs_sentence"] + stats["pairs_phrase"]
    assert stats["pairs.docs.gnome-help"] == len(pairs)
    assert stats.get("pages_mismatched", 0) == 0 and stats.get("files_unparsable", 0) == 0


def test_docbook_entities_includes_and_untranslated(tmp_path):
    stats: dict[str, int] = {}
    pairs = list(read_pairs({"ar": _aisleriot(tmp_path)}, stats, keys=["ar"]))
    by_doc: dict[str, list[Pair]] = {}
    for p in pairs:
        by_doc.setdefault(p.doc, []).append(p)
    assert list(by_doc) == ["gnome-help/accessibility-devel-guide/index.docbook",
                            "gnome-help/aisleriot/index.docbook", "gnome-help/aisleriot/klondike.xml"]
    assert _texts(by_doc["gnome-help/aisleriot/index.docbook"]) == DOCBOOK_PAIRS
    assert _texts(by_doc["gnome-help/aisleriot/klondike.xml"]) == GAME_PAIRS
    # the English guide pulls its chapter from gtest.xml (an external entity), the German one is one file
    assert _texts(by_doc["gnome-help/accessibility-devel-guide/index.docbook"]) == A11Y_PAIRS
    assert stats["dropped_untranslated"] == 2  # "Klondike", and the rules paragraph left in English
    # C/aisleriot/legal.xml and C/accessibility-devel-guide/gtest.xml have no German file of their own
    assert stats["files_paired"] == 3 and stats["files_unpaired"] == 2


def test_blocks_skip_markup_and_keep_inline_text():
    page = parse_page(PAGE_EN.encode())
    shapes = [b.tag for b in page.blocks]
    assert shapes[:3] == ["info/desc", "page/title", "page/p"]
    assert shapes.count("td/p") == 2 and "when/p" in shapes
    texts = [b.text for b in page.blocks]
    assert "Open the system menu from the right side of the top bar." in texts
    assert f"See {AUTOTEXT} for more help. You could have entered the wrong password." in texts
    assert page.sections == [("troubleshooting", len(texts) - 5, len(texts))]


def _sectioned(extra: str = "", sections: bool = True) -> bytes:
    """A Mallard page with two sections; `extra` is appended to the first one (a stale translation)."""
    page = f"""<page xmlns="http://projectmallard.org/1.0/" type="topic" id="x">
<title>{'Titel' if extra else 'Title'}</title>
<section id="a"><title>A</title><p>{'Eins' if extra else 'One'}</p>{extra}</section>
<section id="b"><title>B</title><p>{'Zwei' if extra else 'Two'}</p></section>
</page>"""
    return (page if sections else page.replace(' id="a"', "").replace(' id="b"', "")).encode()


def test_section_fallback_skips_only_the_mismatched_section():
    stats: Counter = Counter()
    de = parse_page(_sectioned("<note><p>Neu</p></note>"))
    en = parse_page(_sectioned())
    got = [(d.text, e.text) for d, e in paired_blocks(de, en, stats)]
    assert got == [("Titel", "Title"), ("B", "B"), ("Zwei", "Two")]
    assert stats["sections_mismatched"] == 1 and stats["blocks_in_mismatched_sections"] == 3
    # without section ids the whole page is skipped
    stats = Counter()
    de = parse_page(_sectioned("<note><p>Neu</p></note>", sections=False))
    en = parse_page(_sectioned(sections=False))
    assert list(paired_blocks(de, en, stats)) == []
    assert stats["pages_mismatched"] == 1


def test_unparsable_page_is_counted_and_skipped(tmp_path):
    deb = make_deb(tmp_path / "broken.deb", {
        HELP + "C/gnome-help/legal.xml": LEGAL_EN,
        HELP + "de/gnome-help/legal.xml": LEGAL_DE,
        HELP + "C/gnome-help/bad.page": PAGE_EN,
        HELP + "de/gnome-help/bad.page": PAGE_DE.replace("</steps>", ""),  # not well-formed
    })
    stats: dict[str, int] = {}
    pairs = list(read_pairs({"k": deb}, stats, keys=["k"]))
    assert _texts(pairs) == LEGAL_PAIRS
    assert stats["files_unparsable"] == 1 and stats["files_unparsable.de/gnome-help/bad.page"] == 1


def test_errors(tmp_path):
    corrupt = tmp_path / "corrupt.deb"
    corrupt.write_bytes(b"!<arch>\nnot really")
    with pytest.raises(DataError):
        list(read_pairs({"k": corrupt}, keys=["k"]))
    no_help = make_deb(tmp_path / "nohelp.deb", {"usr/share/doc/x/README": "hi"})
    with pytest.raises(DataError, match="no German and English help"):
        list(read_pairs({"k": no_help}, keys=["k"]))
    with pytest.raises(DataError, match="no file given"):
        list(read_pairs({}, keys=["k"]))


def test_sources_are_pinned_for_this_corpus():
    sources = sources_for(gnome_help.FEEDS)
    assert len(sources) >= 10 and "gnome_help_user_docs" in sources
    for key, src in sources.items():
        assert SOURCES[key] is src and src.registry == "debian" and len(src.sha256) == 64
        assert src.url.endswith(src.filename) and src.licence
