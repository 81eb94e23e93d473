"""A gettext catalog entry -> the clean (German, English) texts it pairs.

Pairing rule: inside one entry, German msgstr[0] with the English msgid and msgstr[1] with msgid_plural;
nothing is paired across entries. The header, untranslated entries (empty msgstr), fuzzy entries,
translator-credit entries and entries whose msgid is a message key rather than English ("label_title", CUPS's
"media-type.glass-opaque") are dropped. An entry with a "#. Default: ..." comment (Zope/Plone: the msgid is a
key) is paired with that default text instead.

Cleanup (catalog-specific; the corpus filters do the rest):
- keyboard accelerators are removed ("_Open", "Ö_ffnen", "&Open", "~Open", "/_Edit/_Find" -> plain words), but
  not an underscore inside a token found unchanged on the other side (an identifier: "file_name", "LC_ALL"),
  an "&" between capitals ("R&D") or a text with several candidate markers ("%s_%s", "__init__");
- HTML/Pango tags and KDE's paired semantic tags (<para>, <filename>%1</filename>) are removed, entities
  decoded; lone <file>-style metavariables of usage messages stay;
- an entry with line breaks is paired line by line when both sides have the same number of non-empty lines
  and neither is a paragraph wrapped at a fixed width (a line ending mid-sentence before a lower-case word);
  otherwise its lines are joined;
- pairs whose sides are only placeholders, format codes, markup, URLs or numbers are dropped; placeholders
  inside real text stay (%s, {0}, $VAR, GCC's %<...%>) for the corpus filters to judge.
"""
from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterator

from .gettext_format import Entry
from .io import clean_field

_CREDITS = frozenset({"translator-credits", "translator_credits", "translators", "your names", "your emails"})
# A message key, not English: "label_add_item", "help.title", CUPS's "job-error-action.cancel-job".
_KEY_LIKE = re.compile(r"^[a-z][a-z0-9-]*(?:[_.][a-z0-9-]+)+$")


def entry_texts(e: Entry, stats: Counter) -> Iterator[tuple[str, str]]:
    """(German, English) raw texts of one entry: the singular and, if present, the plural form."""
    if not e.msgid:
        return  # the header
    if e.fuzzy:
        stats["dropped_fuzzy"] += 1
        return
    en = e.default or e.msgid
    if en.strip().casefold() in _CREDITS or "OF TRANSLATORS" in (e.context + e.msgid).upper():
        stats["dropped_credits"] += 1
        return
    if not e.default and _KEY_LIKE.match(e.msgid):
        stats["dropped_msgid_is_key"] += 1
        return
    if not e.msgstr[0]:
        stats["dropped_untranslated"] += 1
        return
    yield e.msgstr[0], en
    if e.msgid_plural and len(e.msgstr) > 1 and e.msgstr[1]:
        yield e.msgstr[1], e.msgid_plural


# Accelerator markers: "_" (GTK, LibreOffice UI), "&" (Qt, KDE, wx), "~" (older LibreOffice) before the
# mnemonic character; "&&" is a literal ampersand, "&name;" an entity.
_MARKER = re.compile(r"(?<![_~])([_~])(?=[^\W_])|(?<!&)&(?![#\w]+;)(?=[^\W_])")
_TOKEN = re.compile(r"\S+")
_ABBREVIATION = re.compile(r"[A-Z]&[A-Z]")
_LETTER = re.compile(r"[^\W\d_]")


def strip_accelerators(de: str, en: str) -> tuple[str, str]:
    """Both texts without their accelerator marker. A "_" inside a token found unchanged on the other side
    ("file_name", "LC_ALL") belongs to an identifier, a "&" between capitals to an abbreviation ("R&D"); a side
    left with several candidates is left alone, except a GTK menu path ("/_Edit/Select _thread")."""
    return _strip_side(de, en), _strip_side(en, de)


def _strip_side(text: str, other: str) -> str:
    if text.startswith("/_"):
        return "/".join(_strip_marker(item, other) for item in text.split("/"))
    return _strip_marker(text, other)


def _strip_marker(text: str, other: str) -> str:
    other_tokens = set(other.split())
    candidates = []
    for m in _MARKER.finditer(text):
        token = next(t for t in _TOKEN.finditer(text) if t.start() <= m.start() < t.end())
        word = token.group()
        inside = _LETTER.search(text[token.start():m.start()])  # "Ö_ffnen"; "_Open", "(&Edit)" start a word
        if "://" in word or word[0] in "%$" or word.count(m.group()) > 1:
            continue  # a URL, a variable ("%EXTENSION_NAME"), "_NET_WM_NAME"
        if inside and (_ABBREVIATION.search(word) if m.group() == "&" else word in other_tokens):
            continue  # an abbreviation ("R&D", "AT&T"), an identifier found on both sides ("sal_Int8")
        candidates.append(m.start())
    if len(candidates) != 1:
        return text
    at = candidates[0]
    marker, text = text[at], text[:at] + text[at + 1:]
    return text.replace("&&", "&") if marker == "&" else text  # Qt escapes a literal "&" as "&&"


_TAG = re.compile(r"</?(?:a|b|i|u|s|em|strong|big|small|span|tt|sub|sup|p|br|qt|html|body|code|kbd|nobr|"
                  r"font|center|ul|ol|li|div|pre|h[1-6]|img|hr|table|tr|td|th|var|cite|blockquote)"
                  r"(?:\s[^<>]*)?/?>", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);")


# KDE's semantic markup (KUIT), removed only as an element with its end tag: "<filename>%1</filename>", while a
# lone "<filename>" is a metavariable of a usage message ("cp <file> <dir>") and stays.
_KUIT_BLOCKS = "title|subtitle|para|list|item|note|warning|tip"
_KUIT = re.compile(rf"<({_KUIT_BLOCKS}|filename|interface|command|application|emphasis|shortcut|link|icode|bcode|"
                   r"placeholder|email|envar|message|numid|resource)(?:\s[^<>]*)?>(.*?)</\1\s*>",
                   re.IGNORECASE | re.DOTALL)
_KUIT_BLOCK = re.compile(rf"(?:{_KUIT_BLOCKS})$", re.IGNORECASE)
_LINE_BREAK = re.compile(r"<nl\s*/>", re.IGNORECASE)


def _kuit_element(m: re.Match) -> str:
    return f"\n{m.group(2)}\n" if _KUIT_BLOCK.match(m.group(1)) else m.group(2)


def strip_markup(text: str) -> str:
    """HTML/Pango and KDE tags out (a word boundary kept), entities decoded; <file>-style metavariables stay."""
    text = _TAG.sub(lambda m: "\n" if m.group().lower().startswith(("<br", "<p", "</p", "<li")) else "", text)
    if "</" in text:
        for _ in range(4):  # nested elements: <para><filename>x</filename></para>
            text, n = _KUIT.subn(_kuit_element, text)
            if not n:
                break
    text = _LINE_BREAK.sub("\n", text)
    return _ENTITY.sub(lambda m: html.unescape(m.group()), text)


# A line broken inside a sentence: it ends in a letter, digit or comma and the next one starts in lower case.
_WRAPPED = re.compile(r"[\w,;]\n[ \t]*[a-zäöüß(]")


def split_lines(de: str, en: str, stats: Counter) -> list[tuple[str, str]]:
    """Texts with line breaks: line by line where both sides have the same number of non-empty lines (a
    usage message, a list), else each side as one text. A paragraph wrapped at a fixed width is one text
    even when the line counts agree: its lines break at different words in each language."""
    if "\n" not in de and "\n" not in en:
        return [(de, en)]
    de_lines = [ln for ln in de.split("\n") if ln.strip()]
    en_lines = [ln for ln in en.split("\n") if ln.strip()]
    if len(de_lines) == len(en_lines):
        if len(de_lines) < 2:
            return [(" ".join(de_lines), " ".join(en_lines))]
        if not (_WRAPPED.search("\n".join(de_lines)) or _WRAPPED.search("\n".join(en_lines))):
            stats["entries_split_by_lines"] += 1
            return list(zip(de_lines, en_lines, strict=True))
    stats["entries_lines_joined"] += 1
    return [(" ".join(de_lines), " ".join(en_lines))]


# printf (%s, %1$d, %(name)s, %-10.3f, %lu, %'d, %%), Qt (%1, %n), GCC quotes (%<, %>, %qs), Python braces
# ({0}, {name}), shell and template variables ($VAR, ${VAR}, $(var)), URLs, e-mail addresses, markup and
# file names: what is left once they are removed must hold a letter on both sides.
_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[-+ #0'IlhqLjztw0-9.*$]*[a-zA-Z%]|%[<>']|%\d+|\{[^{}]*\}|"
                          r"\$\{[^}]*\}|\$\([^)]*\)|\$[A-Za-z_]\w*|https?://\S+|www\.\S+|\S+@\S+\.\w+|"
                          r"<[^<>\s][^<>]*>|&[#\w]+;|\S+\.(?:html?|png|svg|xml|txt|py|js|css|ini|conf|json)\b")


def placeholders_only(text: str) -> bool:
    return not _LETTER.search(_PLACEHOLDER.sub(" ", text))


def text_pairs(de: str, en: str, stats: Counter) -> Iterator[tuple[str, str]]:
    """The cleaned (de, en) texts of one entry's singular or plural form (before sentence alignment)."""
    de, en = strip_accelerators(de, en)
    de, en = strip_markup(de).replace("\t", " "), strip_markup(en).replace("\t", " ")
    for d, e in split_lines(de, en, stats):
        d, e = clean_field(d), clean_field(e)
        if d and e and (placeholders_only(d) or placeholders_only(e)):
            stats["dropped_placeholders_only"] += 1
            continue
        yield d, e

