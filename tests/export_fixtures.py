"""Tiny model directories exported to ONNX, shared by test_export, test_runtime and test_triton.

Exporting costs ~4 s per graph (torch.export tracing, whatever the model size), so each tiny
model is built and exported once per test process and reused read-only by every test.
"""
from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

import torch

import tx
from export.pipeline import ExportOptions, export_model_dir

GERMAN = [
    "Ich trinke keinen Alkohol.", "Kannst du Auto fahren?", "Das Wetter ist heute schön.",
    "Wir treffen uns morgen am Bahnhof.", "Wo ist die nächste Apotheke?", "Die Kinder spielen im Garten.",
    "Wie viel kostet diese Jacke?", "Es tut mir leid.", "Ich verstehe nicht, was du meinst.",
]
ENGLISH = [
    "I do not drink alcohol.", "Can you drive a car?", "The weather is nice today.",
    "We meet tomorrow at the station.", "Where is the nearest pharmacy?", "The children play in the garden.",
    "How much does this jacket cost?", "I am sorry.", "I do not understand what you mean.",
]
REVIEWS = [
    ("positive", "a gem of a film, warm and funny"), ("negative", "dull, slow and far too long"),
    ("positive", "the best thing I have seen this year"), ("negative", "a mess of a script and wooden acting"),
    ("positive", "moving and beautifully shot"), ("negative", "I wanted my two hours back"),
]
TRANSLATE_META = {"task": "translate", "directions": [["de", "en"], ["en", "de"]], "max_src_len": 48}
SENTIMENT_TEMPERATURE = 1.7
SENTIMENT_META = {"task": "sentiment", "labels": ["negative", "positive"], "max_len": 48}

_root = Path(tempfile.mkdtemp(prefix="tx-export-tests-"))
atexit.register(shutil.rmtree, _root, ignore_errors=True)


def write_tsv(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> None:
    lines = ["\t".join(header)] + ["\t".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@functools.cache
def tokenizer_json() -> str:
    from tx.tokenizer import train_tokenizer

    texts = GERMAN + ENGLISH + [text for _, text in REVIEWS]
    tokenizer = train_tokenizer(texts * 3, vocab_size=120, min_frequency=1)
    path = _root / "tokenizer.json"
    tokenizer.save(path)
    return path.read_text(encoding="utf-8")


def vocab_size() -> int:
    from tx.tokenizer import Tokenizer

    return Tokenizer.from_str(tokenizer_json()).vocab_size


def build_translation_dir(path: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    config = tx.Seq2SeqConfig(vocab_size=vocab_size(), d_model=32, n_heads=4, n_layers=2, d_ff=64, dropout=0.0,
                              max_len=64)
    tx.save_model_dir(path, tx.Seq2SeqTransformer(config).eval(), tokenizer_json(), TRANSLATE_META)
    write_tsv(path / "samples.tsv", ["de", "en"], list(zip(GERMAN, ENGLISH, strict=True)))
    return path


def build_sentiment_dir(path: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    # temperature != 1: every export test then checks that the calibration travels into the graph
    config = tx.ClassifierConfig(vocab_size=vocab_size(), d_model=16, n_heads=2, n_layers=2, d_ff=32, dropout=0.0,
                                 max_len=64, temperature=SENTIMENT_TEMPERATURE)
    tx.save_model_dir(path, tx.SentimentClassifier(config).eval(), tokenizer_json(), SENTIMENT_META)
    write_tsv(path / "samples.tsv", ["label", "text"], REVIEWS)
    return path


@functools.cache
def exported(kind: str) -> Path:
    """A tiny model directory of `kind` ("translate" | "sentiment") with fp32 + int8 exports (read-only!)."""
    build = build_translation_dir if kind == "translate" else build_sentiment_dir
    model_dir = build(_root / kind)
    report = export_model_dir(model_dir, ExportOptions(data_dir=_root / "no-data"), log=lambda _: None)
    assert report.ok, report.failures
    return model_dir


def fresh_copy(kind: str, name: str) -> Path:
    """A private, writable copy of an exported model directory (for tests that break files)."""
    target = _root / "copies" / name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(exported(kind), target)
    return target
