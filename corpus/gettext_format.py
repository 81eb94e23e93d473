"""The gettext catalog formats: .po (text) and .mo (compiled) files parsed into entries.

Each entry maps an English source string (msgid, optionally with a context, msgctxt, and a plural form,
msgid_plural) to its translation (msgstr; msgstr[0], msgstr[1], ... for the plural forms). The .mo layout (GNU
gettext manual, "MO Files"): a magic number giving the byte order, a revision, the entry count and the offsets of
two tables of (length, offset) records, originals and translations; a context is prefixed to the msgid and
joined by "\\x04", plural forms are joined by "\\x00"; entry 0 (empty msgid) is the header, which names the
charset. A .po file spells the same fields as quoted C strings, marks fuzzy entries with "#, fuzzy" and obsolete
ones with "#~"; Zope/Plone catalogs, whose msgid is a message key, give the English text as "#. Default: ...".
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from .io import DataError


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

