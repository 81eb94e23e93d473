"""A sentence translates the same alone and inside a batch, at every precision and with every int8 scheme the export
may pick (export/quantize.py `default_scheme`, forced here for a CPU with and without VNNI): no activation scale
spans the rows of a batch, and padding rows do not reach the real ones.

Through the runtime API (`OnnxTranslator.translate`, which sorts by length and pads batches of up to 32) on the tiny
exported translator, with sentences it never saw (the shipped model's judged everyday sentences), of mixed length.
Sampling is left out: `translate` seeds each batch once (seed + batch number) and draws for all its rows from one
generator, so a sampled sentence depends on its batch by design.
"""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
from export_fixtures import fresh_copy

from export.quantize import default_scheme, quantize_int8
from runtime import OnnxTranslator
from runtime.cpu import cpu_has_vnni
from runtime.tsv import read_tsv

pytestmark = pytest.mark.exports

JUDGED = Path(__file__).resolve().parents[2] / "models" / "translate" / "everyday_judged.tsv"
MAX_LEN = 12  # target tokens: the tiny model is untrained and rarely stops by itself; 12 steps show any drift
needs_vnni = pytest.mark.skipif(not cpu_has_vnni(), reason="the VNNI scheme's files refuse to load without VNNI")


@functools.cache
def sentences(count: int) -> list[str]:
    """`count` German sentences spread evenly over the judged list sorted by length: short and long ones mixed."""
    german = sorted({r["source"] for r in read_tsv(JUDGED) if r["direction"] == "de-en"}, key=lambda s: (len(s), s))
    picked = [german[i * len(german) // count] for i in range(count)][::-1]  # longest first: the batch sorts them
    assert len(picked) == count and len({len(s.split()) for s in picked}) >= 4, "too few or too alike sentences"
    return picked


@functools.cache
def translator(scheme: str) -> OnnxTranslator:
    """fp32, or int8 made with the scheme the export picks on a CPU with ("vnni") or without ("no-vnni") VNNI."""
    if scheme == "fp32":
        return OnnxTranslator(fresh_copy("translate", "batch-fp32"), provider="cpu", precision="fp32", threads=1)
    model_dir = fresh_copy("translate", f"batch-{scheme}")
    chosen = default_scheme(vnni=scheme == "vnni")
    for graph in ("encoder", "decoder"):
        quantize_int8(model_dir / "onnx" / f"{graph}.fp32.onnx", model_dir / "onnx" / f"{graph}.int8.onnx",
                      chosen.per_channel, chosen.weight_bits, chosen.weight_type, chosen.keep_fp32,
                      chosen.block_size, chosen.row_output)
    return OnnxTranslator(model_dir, provider="cpu", precision="int8", threads=1)


def differ_alone_and_batched(scheme: str, method: str, count: int) -> list[str]:
    """The sentences whose translation inside one call of `count` differs from their translation alone."""
    model, texts = translator(scheme), sentences(count)
    settings = {"src_lang": "de", "tgt_lang": "en", "method": method, "max_len": MAX_LEN}
    batched = model.translate(texts, **settings)
    alone = [model.translate([text], **settings)[0] for text in texts]
    return [f"{text!r}: alone {a.token_ids}, batched {b.token_ids}"
            for text, a, b in zip(texts, alone, batched, strict=True) if a.token_ids != b.token_ids]


@pytest.mark.parametrize("method", ["greedy", "beam"])
@pytest.mark.parametrize("count", [16, 60])
@pytest.mark.parametrize("scheme", ["fp32", "no-vnni", pytest.param("vnni", marks=needs_vnni)])
def test_a_sentence_translates_the_same_alone_and_in_a_batch(scheme, method, count):
    """Under a second each (the tiny model), so all stay in the fast suite. The old one-scale-per-tensor int8
    kernels fail here; on the shipped translator they changed 65 of 400 greedy answers (docs/export-and-runtime.md)."""
    assert differ_alone_and_batched(scheme, method, count) == []
