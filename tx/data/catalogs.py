"""German gettext message catalogs of free software (Debian packages and Python wheels).

Format: a program's user-visible strings are translated in gettext catalogs, one per text domain and language:
.../<lang>/LC_MESSAGES/<domain>.mo (compiled, binary) or .po (text), a few projects spell it .../locale/de.po
or .../<lang>/<domain>_de.po. Each entry maps an English source string (msgid, optionally with a context,
msgctxt, and a plural form, msgid_plural) to its German translation (msgstr, msgstr[0] and msgstr[1] for
German's two plural forms). The .mo layout (GNU gettext manual, "MO Files"): a magic number giving the byte
order, a revision, the entry count and the offsets of two tables of (length, offset) records, originals and
translations; a context is prefixed to the msgid and joined by "\\x04", plural forms are joined by "\\x00";
entry 0 (empty msgid) is the header, which names the charset.

Pairing rule: inside one entry, German msgstr[0] with the English msgid and msgstr[1] with msgid_plural;
nothing is paired across entries. The header, untranslated entries (empty msgstr), fuzzy and obsolete .po
entries, translator-credit entries and entries whose msgid is a message key rather than English ("label_title",
CUPS's "media-type.glass-opaque") are dropped. A .po entry with a "#. Default: ..." comment (Zope/Plone: the
msgid is a key) is paired with that default text instead. Where a package ships the same catalog as .po and
.mo, the .po is read (it keeps the defaults and the fuzzy flags); where it ships "de" and "de_DE", "de".

Cleanup (catalog-specific; the corpus filters do the rest):
- keyboard accelerators are removed ("_Open", "Ö_ffnen", "&Open", "~Open", "/_Edit/_Find" -> plain words), but
  not an underscore inside a token found unchanged on the other side (an identifier: "file_name", "LC_ALL"),
  an "&" between capitals ("R&D") or a text with several candidate markers ("%s_%s", "__init__");
- HTML/Pango tags and KDE's paired semantic tags (<para>, <filename>%1</filename>) are removed, entities
  decoded; lone <file>-style metavariables of usage messages stay;
- an entry with line breaks is paired line by line when both sides have the same number of non-empty lines
  and neither is a paragraph wrapped at a fixed width (a line ending mid-sentence before a lower-case word);
  otherwise its lines are joined;
- pairs whose sides are empty, identical or only placeholders, format codes, markup, URLs or numbers are
  dropped; placeholders inside real text stay (%s, {0}, $VAR, GCC's %<...%>) for the corpus filters to judge;
- entries of several sentences are sentence-aligned by `align.align_block` (via block_pairs.block_pairs,
  whose drop rules this reader shares); exact repeats inside one document are dropped.

Document id: "<package>/<domain>" ("libreoffice-l10n-de/sw", "sphinx/sphinx"), so a whole catalog stays in
one split; catalogs of one package sharing a domain name (wagtail's many "django") share the document.
Never read: Django's own catalogs (held out for evaluation): the `Django` package and any path under
django/conf/locale or django/contrib.
"""
from __future__ import annotations

import fnmatch
import html
import re
import struct
import zipfile
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .align import AlignStats
from .block_pairs import block_pairs, finish_stats, make_pair
from .debpkg import iter_deb_files
from .io import DataError, clean_field
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


def _package_files(src: Source, path: Path) -> Iterator[tuple[str, bytes]]:
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
    found: dict[str, dict[tuple[int, int], tuple[Location, bytes]]] = {}
    for name, content in _package_files(src, path):
        loc = catalog_location(name)
        if loc is not None:
            found.setdefault(loc.key, {})[(LANGS.index(loc.lang), EXTS.index(loc.ext))] = (loc, content)
    out = []
    for key in sorted(found):
        variants = found[key]
        stats["catalog_files_skipped_variant"] += len(variants) - 1
        out.append(variants[min(variants)])
    return out


# --- parsing ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    context: str
    msgid: str
    msgid_plural: str
    msgstr: tuple[str, ...]  # one form, or one per plural form
    default: str = ""  # "#. Default:" text of a .po entry whose msgid is a message key
    fuzzy: bool = False


_CHARSET = re.compile(r"charset=([\w.:-]+)", re.IGNORECASE)


def _charset(header: bytes) -> str:
    """The charset named in a catalog header; UTF-8 where none or an unknown one is named."""
    m = _CHARSET.search(header.decode("ascii", "replace"))
    name = m.group(1) if m else "utf-8"
    try:
        "".encode(name)
    except LookupError:
        return "utf-8"
    return "utf-8" if name.upper() == "CHARSET" else name


def parse_mo(data: bytes, where: str) -> list[Entry]:
    """Entries of a compiled catalog (revision 0 or 1; the system-dependent strings of revision 1 are not read)."""
    if len(data) < 28:
        raise DataError(f"{where}: not a .mo catalog (too short)")
    for order in "<>":
        magic, revision, count, orig_at, trans_at = struct.unpack(order + "5I", data[:20])
        if magic == 0x950412DE:
            break
    else:
        raise DataError(f"{where}: not a .mo catalog (bad magic number)")
    if revision >> 16 > 1 or max(orig_at, trans_at) + 8 * count > len(data):
        raise DataError(f"{where}: corrupt .mo catalog (revision {revision:#x}, {count} entries)")

    def string(table: int, i: int) -> bytes:
        length, offset = struct.unpack_from(order + "2I", data, table + 8 * i)
        if offset + length > len(data):
            raise DataError(f"{where}: corrupt .mo catalog (string {i} beyond the end)")
        return data[offset:offset + length]

    raw = [(string(orig_at, i), string(trans_at, i)) for i in range(count)]
    charset = next((_charset(t) for o, t in raw if o == b""), "utf-8")
    entries = []
    for orig, trans in raw:
        try:
            orig_s, trans_s = orig.decode(charset), trans.decode(charset)
        except UnicodeDecodeError:
            raise DataError(f"{where}: entry not in the catalog's charset {charset}") from None
        context, _, msgid = orig_s.rpartition("\x04")
        msgid, _, plural = msgid.partition("\x00")
        entries.append(Entry(context, msgid, plural, tuple(trans_s.split("\x00"))))
    return entries


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", '"': '"', "\\": "\\",
            "'": "'", "?": "?"}
_ESCAPE = re.compile(r'\\(?:([ntrabfv"\\\'?])|([0-7]{1,3})|x([0-9a-fA-F]{1,2}))')
_PO_LINE = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+"(.*)"\s*$')
_PO_CONTINUATION = re.compile(r'^"(.*)"\s*$')
_DEFAULT = re.compile(r'^#\.\s*Default:\s*"(.*)"\s*$')


def _unescape(s: str) -> str:
    def one(m: re.Match) -> str:
        if m.group(1):
            return _ESCAPES[m.group(1)]
        return chr(int(m.group(2), 8) if m.group(2) else int(m.group(3), 16))
    return _ESCAPE.sub(one, s)


class _PoEntry:
    def __init__(self) -> None:
        self.fields: dict[str, str] = {}
        self.default = ""
        self.fuzzy = False
        self.last = ""

    def entry(self) -> Entry | None:
        if "msgid" not in self.fields:
            return None
        forms = [self.fields[k] for k in sorted((k for k in self.fields if k.startswith("msgstr[")),
                                                key=lambda k: int(k[7:-1]))]
        msgstr = tuple(forms) if forms else (self.fields.get("msgstr", ""),)
        return Entry(self.fields.get("msgctxt", ""), self.fields["msgid"], self.fields.get("msgid_plural", ""),
                     msgstr, self.default, self.fuzzy)


def parse_po(data: bytes, where: str) -> list[Entry]:
    """Entries of a .po catalog; obsolete ("#~") entries are left out, fuzzy ones flagged."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        head = data[:data.find(b"\n\n")] if b"\n\n" in data else data[:2000]
        try:
            text = data.decode(_charset(head))
        except UnicodeDecodeError:
            raise DataError(f"{where}: .po catalog not in its declared charset") from None
    entries: list[Entry] = []
    cur = _PoEntry()

    def flush() -> None:
        nonlocal cur
        e = cur.entry()
        if e is not None:
            entries.append(e)
        cur = _PoEntry()

    for n, line in enumerate(text.split("\n"), 1):  # not splitlines: U+2028 may stand inside a string
        line = line.strip()
        if not line or line.startswith("#~"):
            if not line and cur.fields:
                flush()
            continue
        if line.startswith("#"):
            if cur.fields and "msgid" in cur.fields and any(k.startswith("msgstr") for k in cur.fields):
                flush()  # a comment starts the next entry even without a blank line between them
            if line.startswith("#,") and "fuzzy" in line[2:].replace(",", " ").split():
                cur.fuzzy = True
            m = _DEFAULT.match(line)
            if m:
                cur.default = _unescape(m.group(1))
            continue
        m = _PO_LINE.match(line)
        if m:
            field = m.group(1)
            if field in ("msgctxt", "msgid") and any(k.startswith("msgstr") for k in cur.fields):
                flush()
            cur.fields[field] = _unescape(m.group(3))
            cur.last = field
            continue
        m = _PO_CONTINUATION.match(line)
        if m and cur.last:
            cur.fields[cur.last] += _unescape(m.group(1))
            continue
        raise DataError(f"{where}:{n}: not a .po line: {line[:60]!r}")
    flush()
    return entries


def parse_catalog(loc: Location, data: bytes, where: str) -> list[Entry]:
    return parse_mo(data, where) if loc.ext == ".mo" else parse_po(data, where)


# --- entry -> text pairs ----------------------------------------------------------------------------------------
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
