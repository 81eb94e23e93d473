"""web/static/tokenizer.js gives the ids HF tokenizers gives on the shipped tokenizer.json (runtime/tokenizer.py):
1,000 sentences from the repository's corpora in both languages, and the cases where a re-implementation slips
(umlauts, ß, emoji, NFKC, control characters, whitespace, typed special tokens). The JavaScript runs in chromium
(node may be missing), served from a routed origin: no server, no build, no exported model."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from runtime.tokenizer import Tokenizer

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TOKENIZER = ROOT / "models" / "translate" / "tokenizer.json"
ORIGIN = "http://tokenizer.test"
SENTENCES = 1000

EDGE_CASES = [
    "Äpfel, Öl und Übermut", "äöü ÄÖÜ", "Straße", "STRASSE", "ẞ groß", "Mu\u0308ller", "Ma\u0308dchen",  # combining
    "Gut gemacht 👍🏽 😀!", "🇩🇪🇬🇧", "ﬁnden ﬂach", "Ｈａｌｌｏ Ｗｅｌｔ", "① ② ½ ℌ ㎞", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "x² H₂O",
    "a\u0000b", "tab\tsep", "line\nbreak\r\nend", "zero\u200bwidth", "\ufeffbom", "soft\u00adhyphen", "a\x1cb",
    "  spaced   out  ", "\u0085next", "non\u00a0breaking", "ideo\u3000graphic", "thin\u2009space", "em\u2003space",
    "<2en> Hallo", "<s>Hallo</s>", "x<unk>y", "<pad><pad>", "<2de><2en>", "<2e n>", "▁already", "a▁▁b", "▁",
    "", "   ", "\n", "今天天气很好", "مرحبا", "Привет мир", "Ελληνικά", "don't", "„Ja“, sagte sie.", "«Non»",
    "e-mail@example.de", "3,14 € / 5 $", "...", "—", "l'été", "naïve café", "İstanbul ı", "Ǆ ǅ ǆ", "ﬀ",
]


def corpus_sentences() -> list[str]:
    """Up to SENTENCES distinct texts, German and English, from the corpora that ship with the repository."""
    texts: list[str] = []
    tables = [(ROOT / "models/translate/samples.tsv", ("de", "en", "output_en", "output_de")),
              (ROOT / "tx/evalsets/everyday.tsv", ("de", "en")),
              (ROOT / "models/translate/everyday_judged.tsv", ("source", "hypothesis")),
              (ROOT / "models/translate/examples.tsv", ("source", "output")),
              (ROOT / "tx/evalsets/negation.tsv", ("text",))]
    for path, columns in tables:
        with open(path, encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                texts += [row[c] for c in columns if row.get(c)]
    texts += (ROOT / "tx/evalsets/bench_de.txt").read_text(encoding="utf-8").splitlines()
    return list(dict.fromkeys(texts))[:SENTENCES]


@pytest.fixture(scope="module")
def js_tokenizer(chromium):
    """A chromium page with tokenizer.js loaded on the shipped tokenizer.json; encode/decode through it."""
    files = {"/tokenizer.js": (ROOT / "web/static/tokenizer.js", "text/javascript"),
             "/tokenizer.json": (TOKENIZER, "application/json"), "/": (None, "text/html")}

    def serve(route):
        path, kind = files[route.request.url.removeprefix(ORIGIN)]
        route.fulfill(status=200, content_type=kind, body=path.read_bytes() if path else b"<!doctype html>")

    page = chromium.new_page()
    page.route(f"{ORIGIN}/**", serve)
    page.goto(ORIGIN + "/")
    page.evaluate("async () => { const {Tokenizer} = await import('/tokenizer.js');"
                  " window.tok = new Tokenizer(await (await fetch('/tokenizer.json')).json()); }")
    yield page
    page.close()


def js_encode(page, texts: list[str]) -> list[list[int]]:
    return page.evaluate("texts => texts.map(t => window.tok.encode(t))", texts)


def test_the_corpora_give_the_same_ids(js_tokenizer):
    texts = corpus_sentences()
    assert len(texts) == SENTENCES
    german = sum(any(c in t for c in "äöüßÄÖÜ") for t in texts)
    assert german > 100  # both languages, umlauts and ß among them
    python = Tokenizer.load(TOKENIZER)
    expected = python.encode_batch(texts)
    found = js_encode(js_tokenizer, texts)
    wrong = [(t, e, f) for t, e, f in zip(texts, expected, found, strict=True) if e != f]
    assert wrong == [], f"{len(wrong)} of {len(texts)} differ, first: {wrong[:3]}"


def test_the_edge_cases_give_the_same_ids_and_text(js_tokenizer):
    python = Tokenizer.load(TOKENIZER)
    found = js_encode(js_tokenizer, EDGE_CASES)
    wrong = [(t, python.encode(t), f) for t, f in zip(EDGE_CASES, found, strict=True) if python.encode(t) != f]
    assert wrong == []
    decoded = js_tokenizer.evaluate("ids => ids.map(i => window.tok.decode(i))", found)
    assert decoded == [python.decode(ids) for ids in found]
    assert any(3 in ids for ids in found)  # <unk> (emoji, scripts the tokenizer never saw) is among them
