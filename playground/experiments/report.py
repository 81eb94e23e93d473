"""Keep and share: an experiment as a Report (its inputs, its sentences, its figures), and the files made from it:
each figure as SVG and PNG (vl-convert renders the Vega-Lite spec offline, the one the page draws) and its numbers
as CSV, and the whole experiment as one self-contained HTML file (inputs, words, link and every figure inline as
SVG; no script, nothing fetched). Pure: no Streamlit."""
from __future__ import annotations

import functools
import html
import io
import json
import re
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pandas as pd

from .figures import Spec, numbers

PNG_SCALE = 2  # twice the on-screen pixels: sharp in a paper or a slide


@dataclass
class Figure:
    key: str  # the figure's widget key and file name ("compare_attention")
    spec: Spec
    words: str = ""  # what to look at, shown under it


@dataclass
class Report:
    """One experiment as shown: a title, the inputs (name -> value), sentences, and figures in page order."""
    title: str
    inputs: dict[str, str]
    sentences: list[str] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


@functools.lru_cache(maxsize=64)
def _render(spec_json: str, kind: str) -> bytes | str:
    import vl_convert  # ~1 s to start its engine once per process: only when a file is asked for

    spec = json.loads(spec_json)
    return vl_convert.vegalite_to_svg(spec) if kind == "svg" else vl_convert.vegalite_to_png(spec, scale=PNG_SCALE)


def svg(spec: Spec) -> str:
    return _render(json.dumps(spec, sort_keys=True), "svg")


def png(spec: Spec) -> bytes:
    return _render(json.dumps(spec, sort_keys=True), "png")


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet runs as a formula (CSV injection)


def csv(spec: Spec) -> bytes:
    """The figure's numbers as CSV; a text cell a spreadsheet would evaluate ("=1+1") gets an apostrophe first."""
    frame = pd.DataFrame(numbers(spec))
    for column in frame.columns:
        frame[column] = [f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_START) else v for v in frame[column]]
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode("utf-8")


def link(base: str, params: dict[str, str]) -> str:
    return f"{base}?{urlencode(params)}" if base else f"?{urlencode(params)}"


# Long unbroken text (the share link, a pasted sentence without spaces) wraps anywhere, and a figure shrinks to the
# page: the unwrapped link made the page ~2,175 px wide (issue 44.3).
STYLE = ("body{font-family:system-ui,sans-serif;max-width:900px;margin:2em auto;padding:0 1em;color:#222;"
         "overflow-wrap:anywhere}"
         "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
         "code{background:#f3f3f3;padding:0 .2em}"
         "figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}figcaption{color:#555;font-size:.9em}")

_CODE = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*(.+?)\*\*")
_EM = re.compile(r"(?<![*\w])\*(?!\s)([^*]+?)(?<!\s)\*(?![*\w])")


def markdown_html(text: str) -> str:
    """The inline Markdown a Report's sentences use (**bold**, *italic*, `code`), as HTML, everything else escaped:
    the page draws the sentences with st.markdown, and the file showed them raw (`**Knocked out** (zeroed)`). Code
    spans first, their contents kept literal (a token like `**` stays as written); no library, nothing fetched."""
    spans: list[str] = []
    text = text.replace("\0", "")  # the placeholders' marker: never in a sentence

    def keep(match: re.Match) -> str:
        spans.append(f"<code>{html.escape(match.group(1))}</code>")
        return f"\0{len(spans) - 1}\0"

    out = html.escape(_CODE.sub(keep, text))
    out = _STRONG.sub(r"<strong>\1</strong>", out)
    out = _EM.sub(r"<em>\1</em>", out)
    return re.sub("\0(\\d+)\0", lambda m: spans[int(m.group(1))], out)


def html_file(report: Report, share: str) -> str:
    """The experiment as one HTML file: every value escaped, every figure an inline SVG (no script, no fetch)."""
    e = html.escape
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in report.inputs.items())
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{e(report.title)}</title>"
             f"<style>{STYLE}</style></head><body><h1>{e(report.title)}</h1><table>{rows}</table>",
             f"<p>Open this experiment in the playground: <a href='{e(share)}'>{e(share)}</a></p>"]
    parts += [f"<p>{markdown_html(s)}</p>" for s in report.sentences]
    for figure in report.figures:
        parts.append(f"<figure id='{e(figure.key)}'>{svg(figure.spec)}<figcaption>{e(figure.words)}</figcaption>"
                     "</figure>")
    parts.append("<p><small>Made by the Transformer playground's Experiments page; every number comes from "
                 "onnxruntime.</small></p></body></html>")
    return "\n".join(parts)
