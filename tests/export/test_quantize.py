"""int8 quantisation of the exported graphs: values close to fp32, the VNNI-dependent scheme (per-channel or
blockwise MatMulNBits) and what it records, the quality gate that fails an export losing too much.

The tiny model directories come from tests/export_fixtures.py (exported once per process)."""
from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from export_fixtures import (
    ENGLISH,
    GERMAN,
    TRANSLATE_META,
    exported,
    fresh_copy,
    tokenizer_json,
    vocab_size,
)
from export_graph_fixtures import GRAPHS, NEW_SHAPES, loaded, run_onnx, spec_of
from onnx import numpy_helper

import tx
from export import __main__ as export_cli
from export.feeds import random_inputs
from export.quantize import quantize_int8
from runtime import ModelLoadError, OnnxSentimentClassifier, OnnxTranslator
from runtime.spec import (
    REPORT_FILE,
    ModelShape,
    decoder_graph,
    encoder_graph,
)

pytestmark = pytest.mark.exports


# --- int8 ----------------------------------------------------------------------------------------------------------


def quantized_weights(model: onnx.ModelProto) -> list[np.ndarray]:
    """The int8 weight initializers feeding MatMulInteger nodes."""
    inits = {i.name: i for i in model.graph.initializer}
    names = {n.input[1] for n in model.graph.node if n.op_type == "MatMulInteger" and n.input[1] in inits}
    return [numpy_helper.to_array(inits[n]) for n in sorted(names)]


def blockwise_matmuls(model: onnx.ModelProto) -> list[dict[str, int]]:
    """The attributes (bits, block_size, accuracy_level, K, N) of each MatMulNBits node."""
    return [{a.name: a.i for a in n.attribute} for n in model.graph.node if n.op_type == "MatMulNBits"]


def float_weight_matmuls(model: onnx.ModelProto) -> list[str]:
    """MatMul nodes still multiplying by a float weight initializer (not quantised)."""
    inits = {i.name for i in model.graph.initializer}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in inits]


@pytest.mark.parametrize(("task", "graph"), GRAPHS)
def test_int8_graph_runs_close_to_fp32(task, graph):
    model_dir, model, _ = loaded(task)
    spec = spec_of(task, graph)
    fp32_path, int8_path = (model_dir / "onnx" / spec.file_name(p) for p in ("fp32", "int8"))
    int8 = onnx.load(str(int8_path))
    weights = quantized_weights(int8)
    meta = {p.key: p.value for p in int8.metadata_props}
    signed = meta["tx.int8_weight_type"] == "int8"
    assert not float_weight_matmuls(int8)  # every weight MatMul is quantised, one way or the other
    if meta["tx.int8_block_size"] != "0":  # blockwise (the default where the CPU has VNNI): no dynamic MatMuls ...
        blocks = blockwise_matmuls(int8)
        per_row = [n for n in meta["tx.int8_row_output"].split(",") if n]  # ... but the generator's, per row
        assert blocks and len(weights) == len(per_row) and all(w.dtype == np.int8 for w in weights)
        assert meta.get("tx.int8_weight_bits") == ("8" if per_row else None)  # s8 x u8 at full range needs VNNI
        assert all(b["bits"] == 8 and b["block_size"] == int(meta["tx.int8_block_size"]) and b["accuracy_level"] == 4
                   for b in blocks)
    else:
        assert weights and all(w.dtype == (np.int8 if signed else np.uint8) for w in weights)
        if signed and meta["tx.int8_weight_bits"] == "7":
            # 7-bit weights (reduce_range): full-range int8 saturates onnxruntime's int16 sums on CPUs without VNNI.
            assert max(int(np.abs(w.astype(np.int32)).max()) for w in weights) <= 64
        elif not signed:  # unsigned weights use the full 8 bits (the u8 x u8 kernel sums in int32)
            assert max(int(w.max()) for w in weights) == 255 and min(int(w.min()) for w in weights) == 0
    assert int8_path.stat().st_size < fp32_path.stat().st_size
    assert meta["tx.precision"] == "int8" and meta["tx.graph"] == graph
    for number, case in enumerate(NEW_SHAPES[:2]):
        inputs = random_inputs(spec, case, model.config.vocab_size, seed=2000 + number)
        got = run_onnx(task, graph, "int8", inputs)
        want = run_onnx(task, graph, "fp32", inputs)
        for tensor, g, w in zip(spec.outputs, got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype and np.isfinite(g).all(), tensor.name
        # The first output (logits / memory / log-probs) stays close; measured <= 0.13 on these models.
        assert np.abs(got[0] - want[0]).max() < 0.3, f"{graph} int8 {spec.outputs[0].name} at {case}"


def test_quantize_restores_logging_and_leaves_no_files(tmp_path, monkeypatch):
    model_dir, _, _ = loaded("sentiment")
    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    monkeypatch.setattr(root, "level", logging.WARNING)
    quantize_int8(model_dir / "onnx" / "classifier.fp32.onnx", tmp_path / "out" / "classifier.int8.onnx",
                  int8_embeddings=True)  # quantize_dynamic runs (the embedding tables): it is what leaves files
    assert root.level == logging.WARNING
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no <uuid>.data left in the working dir
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["classifier.int8.onnx"]


@pytest.mark.slow
def test_int8_greedy_translations_mostly_agree_on_a_trained_model(tmp_path):
    """A tiny model trained to memorise the sample pairs (peaked distributions, like a real one):
    fp32 ONNX translations identical to PyTorch's, int8 agreeing on nearly all of them."""
    from export.onnx_export import export_graph, graph_metadata
    from runtime import OnnxTranslator
    from runtime.batching import pad
    from runtime.model_files import sha256_of
    from tx.inference import Translator
    from tx.tokenizer import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json())
    torch.manual_seed(0)
    config = tx.Seq2SeqConfig(vocab_size=vocab_size(), d_model=32, n_heads=4, n_layers=2, d_ff=64, dropout=0.0,
                              max_len=64)
    model = tx.Seq2SeqTransformer(config)
    translator = Translator(model, tokenizer, TRANSLATE_META)
    pairs = [(translator.source_ids(text, tgt_lang)[0], tokenizer.encode(target))
             for texts, targets, tgt_lang in ((GERMAN, ENGLISH, "en"), (ENGLISH, GERMAN, "de"))
             for text, target in zip(texts, targets, strict=True)]
    src, src_mask = pad([p[0] for p in pairs], 0)
    tgt_in, _ = pad([[tokenizer.bos_id] + p[1] for p in pairs], 0)
    tgt_out, out_mask = pad([p[1] + [tokenizer.eos_id] for p in pairs], 0)
    src, src_mask, tgt_in, tgt_out, out_mask = map(torch.from_numpy, (src, src_mask, tgt_in, tgt_out, out_mask))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: one thread is several times faster than two on a busy machine
    try:
        model.train()
        for _ in range(150):
            loss = torch.nn.functional.cross_entropy(model(src, tgt_in, src_mask)[out_mask], tgt_out[out_mask])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    finally:
        torch.set_num_threads(threads)
    model.eval()
    assert loss.item() < 0.05

    model_dir = tmp_path / "trained"
    tx.save_model_dir(model_dir, model, tokenizer_json(), TRANSLATE_META)
    stored = tx.read_model_config(model_dir)
    shape = ModelShape.from_config("seq2seq", stored["config"])
    for spec in (encoder_graph(shape), decoder_graph(shape)):
        fp32_path = model_dir / "onnx" / spec.file_name("fp32")
        export_graph(model, spec, fp32_path,
                     graph_metadata(spec, "fp32", stored["config"], sha256_of(model_dir / "tokenizer.json")))
        quantize_int8(fp32_path, model_dir / "onnx" / spec.file_name("int8"))

    reference = Translator.from_dir(model_dir)
    systems = {p: OnnxTranslator(model_dir, provider="cpu", precision=p) for p in ("fp32", "int8")}
    for src_lang, tgt_lang, texts, targets in (("de", "en", GERMAN, ENGLISH), ("en", "de", ENGLISH, GERMAN)):
        want = reference.translate(texts, src_lang=src_lang, tgt_lang=tgt_lang, method="greedy")
        assert sum(t.text == r for t, r in zip(want, targets, strict=True)) >= len(targets) - 1  # it learned them
        fp32 = systems["fp32"].translate(texts, src_lang=src_lang, tgt_lang=tgt_lang, method="greedy")
        int8 = systems["int8"].translate(texts, src_lang=src_lang, tgt_lang=tgt_lang, method="greedy")
        assert [t.token_ids for t in fp32] == [t.token_ids for t in want]
        agree = sum(a.token_ids == b.token_ids for a, b in zip(int8, want, strict=True)) / len(want)
        assert agree >= 0.8, [t.text for t in int8]


# --- int8 scheme and its quality gate -------------------------------------------------------------------------------
def test_vnni_is_read_from_the_cpu_flags():
    from runtime.cpu import cpu_has_vnni

    assert cpu_has_vnni("processor : 0\nflags : fpu sse2 avx2 avx512f avx512_vnni\n")
    assert cpu_has_vnni("flags\t\t: fpu avx2 avx_vnni\n")
    assert not cpu_has_vnni("flags : fpu sse2 avx2 fma\n")
    assert not cpu_has_vnni("")


def test_the_report_records_the_int8_scheme_and_the_files_their_weight_range():
    from runtime.cpu import cpu_has_vnni

    model_dir = exported("translate")
    report = json.loads((model_dir / "onnx" / REPORT_FILE).read_text(encoding="utf-8"))
    scheme = report["int8"]
    assert scheme["per_channel"] is True and scheme["cpu_vnni"] == cpu_has_vnni() and scheme["keep_fp32"] == []
    assert scheme["weight_bits"] == 8 and scheme["why"]
    # the measured default per CPU: blockwise MatMulNBits with VNNI, unsigned per-channel dynamic int8 without
    assert scheme["weight_type"] == ("int8" if cpu_has_vnni() else "uint8")
    assert scheme["block_size"] == (64 if cpu_has_vnni() else 0)
    meta = onnx.load(str(model_dir / "onnx" / "decoder.int8.onnx"), load_external_data=False).metadata_props
    meta = {p.key: p.value for p in meta}
    assert meta["tx.int8_weight_type"] == scheme["weight_type"]
    assert meta["tx.int8_block_size"] == str(scheme["block_size"])
    # only signed 8-bit weights in MatMulInteger need VNNI, so only they carry the mark the loader refuses on other
    # CPUs: with VNNI, the generator's per-row MatMulInteger (MatMulNBits sums in int32 everywhere; unsigned dynamic
    # weights never saturate)
    assert scheme["row_output"] is cpu_has_vnni()
    assert meta.get("tx.int8_weight_bits") == ("8" if cpu_has_vnni() else None)
    assert bool(meta["tx.int8_row_output"]) is cpu_has_vnni()


def test_8_bit_int8_weights_refuse_to_load_on_a_cpu_without_vnni(monkeypatch):
    import runtime.model_files as model_files


    model_dir = fresh_copy("sentiment", "eight-bit")
    onnx_dir = model_dir / "onnx"
    quantize_int8(onnx_dir / "classifier.fp32.onnx", onnx_dir / "classifier.int8.onnx", weight_bits=8,
                  weight_type="int8")
    monkeypatch.setattr(model_files, "cpu_has_vnni", lambda: False)
    with pytest.raises(ModelLoadError, match="8 bits, made for a CPU with VNNI"):
        OnnxSentimentClassifier(model_dir, provider="cpu", precision="int8")
    monkeypatch.setattr(model_files, "cpu_has_vnni", lambda: True)
    assert OnnxSentimentClassifier(model_dir, provider="cpu", precision="int8").classify(["fine"])
    # unsigned 8-bit weights never saturate: they load without VNNI
    quantize_int8(onnx_dir / "classifier.fp32.onnx", onnx_dir / "classifier.int8.onnx", weight_bits=8,
                  weight_type="uint8")
    monkeypatch.setattr(model_files, "cpu_has_vnni", lambda: False)
    assert OnnxSentimentClassifier(model_dir, provider="cpu", precision="int8").classify(["fine"])
    # the recorded weight type decides, not the bit count alone
    import onnx

    from export.onnx_export import set_metadata

    path = onnx_dir / "classifier.int8.onnx"
    graph = onnx.load(path)
    set_metadata(graph, {p.key: p.value for p in graph.metadata_props} | {"tx.int8_weight_bits": "8"})
    onnx.save(graph, path)
    assert OnnxSentimentClassifier(model_dir, provider="cpu", precision="int8").classify(["fine"])


def test_int8_files_whose_activation_scale_spans_the_batch_refuse_to_load_and_are_stale():
    """Files from before the per-row activations (no `tx.int8_activations` mark, dynamic MatMuls) gave a sentence a
    translation that depended on its batch mates: the loader refuses them, `--if-stale` re-exports them; blockwise
    files without the mark were per row and block already and still load."""
    from export.onnx_export import set_metadata
    from export.report import stale_reason
    from runtime.spec import META_INT8_ACTIVATIONS

    model_dir = fresh_copy("sentiment", "unmarked")
    onnx_dir = model_dir / "onnx"
    for block_size, loads in ((0, False), (16, True)):
        path = onnx_dir / "classifier.int8.onnx"
        quantize_int8(onnx_dir / "classifier.fp32.onnx", path, block_size=block_size,
                      weight_type="int8" if block_size else "uint8")
        assert OnnxSentimentClassifier(model_dir, provider="cpu", precision="int8").classify(["fine"])
        graph = onnx.load(str(path))
        graph.ClearField("metadata_props")
        set_metadata(graph, {p.key: p.value for p in onnx.load(str(path)).metadata_props
                             if p.key != META_INT8_ACTIVATIONS})
        onnx.save(graph, str(path))
        if loads:
            assert OnnxSentimentClassifier(model_dir, provider="cpu", precision="int8").classify(["fine"])
        else:
            with pytest.raises(ModelLoadError, match="int8 activations share one scale per batch.*re-export"):
                OnnxSentimentClassifier(model_dir, provider="cpu", precision="int8")
    files = [p.name for p in onnx_dir.glob("*.onnx")]
    assert stale_reason(model_dir, ["fp32", "int8"], files) is None
    report_path = onnx_dir / REPORT_FILE
    report = json.loads(report_path.read_text())
    report["int8"].pop("activations")
    report_path.write_text(json.dumps(report))
    assert "int8 activations share one scale per batch" in stale_reason(model_dir, ["fp32", "int8"], files)
    assert stale_reason(model_dir, ["fp32"], files) is None


@pytest.mark.parametrize("block_size", [16, 64])
def test_blockwise_int8_makes_matmulnbits_that_load_without_vnni_and_stay_close(monkeypatch, block_size):
    import runtime.model_files as model_files

    model_dir = fresh_copy("translate", f"blockwise-{block_size}")
    onnx_dir = model_dir / "onnx"
    spec = spec_of("translate", "decoder")
    quantize_int8(onnx_dir / spec.file_name("fp32"), onnx_dir / spec.file_name("int8"), weight_type="int8",
                  block_size=block_size)
    int8 = onnx.load(str(onnx_dir / spec.file_name("int8")))
    meta = {p.key: p.value for p in int8.metadata_props}
    assert meta["tx.int8_block_size"] == str(block_size) and "tx.int8_weight_bits" not in meta
    blocks = blockwise_matmuls(int8)
    assert blocks and not float_weight_matmuls(int8) and not quantized_weights(int8)
    assert {(b["bits"], b["block_size"], b["accuracy_level"]) for b in blocks} == {(8, block_size, 4)}
    gathers = [n for n in int8.graph.node if n.op_type == "Gather"]
    inits = {i.name: i for i in int8.graph.initializer}
    tables = [numpy_helper.to_array(inits[n.input[0]]) for n in gathers if n.input[0] in inits]
    assert tables and all(t.dtype == np.float32 for t in tables)  # measured: int8 tables cost agreement here
    monkeypatch.setattr(model_files, "cpu_has_vnni", lambda: False)  # MatMulNBits runs on any CPU
    session = OnnxTranslator(model_dir, provider="cpu", precision="int8")
    model = loaded("translate")[1]
    inputs = dict(zip(spec.input_names, random_inputs(spec, NEW_SHAPES[0], model.config.vocab_size, seed=77),
                      strict=True))
    runs = {p: ort.InferenceSession(str(onnx_dir / spec.file_name(p)), providers=["CPUExecutionProvider"])
            .run(spec.output_names, inputs) for p in ("fp32", "int8")}
    assert np.abs(runs["int8"][0] - runs["fp32"][0]).max() < 0.3
    assert session.translate(["Guten Morgen"], src_lang="de", tgt_lang="en", method="greedy")[0].token_ids


def per_tensor_int8(fp32: Path, dst: Path) -> None:
    """The old dynamic int8 file, for comparison: onnxruntime's kernels with one activation scale per tensor."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from export.fused_attention import tidy_fused_outputs

    model = onnx.load(str(fp32))
    del model.graph.value_info[:]
    onnx.save(model, str(dst))
    quantize_dynamic(str(dst), str(dst), weight_type=QuantType.QUInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"],
                     extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT})
    quantized = onnx.load(str(dst))
    tidy_fused_outputs(quantized)  # the fused attention's output types, cleared above (as quantize_int8 does)
    onnx.save(quantized, str(dst))


@pytest.mark.parametrize("scheme", [{"block_size": 0, "weight_type": "uint8"},
                                    {"block_size": 16, "weight_type": "int8"}], ids=["per-row", "blockwise"])
def test_every_int8_scheme_gives_a_row_the_same_output_whatever_its_batch_mates(tmp_path, scheme):
    """The per-row MatMulIntegers (block_size 0) and MatMulNBits quantise activations per row (and block), so a
    sentence's decoder step is bitwise the same alone and in a batch; onnxruntime's dynamic kernels take one
    activation scale for the whole batch, so a loud batch mate changes a row's output (measured on the shipped
    translator: 65 of 400 int8 greedy outputs differed alone and in batches of 32)."""
    model_dir, model, _ = loaded("translate")
    spec = spec_of("translate", "decoder")
    fp32 = model_dir / "onnx" / spec.file_name("fp32")
    inputs = dict(zip(spec.input_names, random_inputs(spec, NEW_SHAPES[1], model.config.vocab_size, seed=5),
                      strict=True))
    for value in inputs.values():
        if value.dtype == np.float32:
            value[1:] *= 20  # the other rows' cached keys/values far louder than row 0's
    alone = {name: value[:1] for name, value in inputs.items()}
    gaps = {}
    for name in ("scheme", "per-tensor"):
        path = tmp_path / f"decoder-{name}.onnx"
        if name == "scheme":
            quantize_int8(fp32, path, **scheme)
        else:
            per_tensor_int8(fp32, path)
        run = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run
        gaps[name] = float(np.abs(run(["log_probs"], inputs)[0][:1] - run(["log_probs"], alone)[0]).max())
    assert gaps["scheme"] == 0.0, gaps  # row 0 does not see its batch mates
    assert gaps["per-tensor"] > 1e-3, gaps  # ... where one scale spans the batch, it does: the inputs can tell


def test_block_size_must_be_a_power_of_two_kernels_take(tmp_path):
    for bad in (8, 48, 512):
        with pytest.raises(ValueError, match="power of 2 from 16 to 256"):
            quantize_int8(tmp_path / "missing.onnx", tmp_path / "out.onnx", block_size=bad)
        with pytest.raises(SystemExit):
            export_cli.main([str(tmp_path), "--block-size", str(bad)])


def test_int8_that_loses_more_than_the_limit_fails_the_export(monkeypatch):
    """The gate is a failure, not a warning: with the limit below any possible drop, the real check fails."""
    import export.quality as quality

    monkeypatch.setattr(quality, "INT8_MAX_BLEU_DROP", -1000.0)
    monkeypatch.setattr(quality, "INT8_MAX_ACCURACY_DROP", -1000.0)
    model_dir = exported("translate")
    _, failures, warnings = quality.translation_quality(model_dir, Path("/nonexistent"), ["fp32", "int8"], 4, 1)
    assert any(f.startswith("int8 loses") and "BLEU (limit -1000.0)" in f for f in failures)
    assert not any("int8 loses" in w for w in warnings)
    _, failures, _ = quality.sentiment_quality(exported("sentiment"), Path("/nonexistent"), ["fp32", "int8"], 6, 1)
    assert any(f.startswith("int8 loses") and "accuracy" in f for f in failures)


def export_reusing_fp32(monkeypatch, name: str, options, vnni: bool | None = None):
    """export_model_dir on a private copy of the tiny translator with its fp32 graphs reused instead of re-exported
    (the int8 files, their checks and the quality step are real): seconds instead of half a minute."""
    import export.graph_job as graph_job
    import export.pipeline as pipeline

    model_dir = fresh_copy("translate", name)
    monkeypatch.setattr(graph_job, "export_graph", lambda *args, **kwargs: 0.0)
    if vnni is not None:
        monkeypatch.setattr(pipeline, "cpu_has_vnni", lambda: vnni)
    options = dataclasses.replace(options, processes=1)  # helper processes would not see the patches
    return model_dir, pipeline.export_model_dir(model_dir, options, log=lambda _: None)


@pytest.mark.parametrize("vnni, keep_fp32", [(True, ()), (False, ("output",))], ids=["vnni", "no-vnni"])
def test_the_export_detects_vnni_and_records_the_scheme_it_chose(monkeypatch, tmp_path, vnni, keep_fp32):
    from export.pipeline import ExportOptions
    from export.report import read_report

    options = ExportOptions(data_dir=tmp_path, check_quality=False, keep_fp32=keep_fp32)
    model_dir, report = export_reusing_fp32(monkeypatch, f"scheme-{vnni}", options, vnni)
    assert report.ok, report.failures
    scheme = read_report(model_dir)["int8"]
    assert scheme["cpu_vnni"] is vnni and scheme["per_channel"] is True and scheme["weight_bits"] == 8
    assert scheme["weight_type"] == ("int8" if vnni else "uint8") and scheme["keep_fp32"] == list(keep_fp32)
    assert ("VNNI" in scheme["why"]) and (("fastest" in scheme["why"]) is vnni)
    assert scheme["block_size"] == (64 if vnni else 0)
    decoder = onnx.load(str(model_dir / "onnx" / "decoder.int8.onnx"))
    meta = {p.key: p.value for p in decoder.metadata_props}
    assert meta["tx.int8_weight_type"] == scheme["weight_type"] and meta["tx.int8_kept_fp32"] == ",".join(keep_fp32)
    assert bool(blockwise_matmuls(decoder)) is vnni and scheme["row_output"] is vnni
    # dynamic MatMuls everywhere without VNNI (the generator kept fp32 here); with it, the generator's per-row
    # MatMulInteger only
    assert (len(quantized_weights(decoder)) == 1) if vnni else len(quantized_weights(decoder)) > 1
    assert bool(meta["tx.int8_row_output"]) is vnni
    assert len(float_weight_matmuls(decoder)) == len(keep_fp32)  # the generator's MatMul stays fp32 only when asked


def test_an_int8_bleu_drop_past_the_limit_fails_the_export(monkeypatch, tmp_path):
    """The measured drop is replaced by one past the limit: the export fails (report.ok False) and says by how much."""
    import export.quality as quality
    from export.pipeline import ExportOptions
    from export.report import read_report

    monkeypatch.setattr(quality, "bleu_delta", lambda bleu, reference: {d: -0.73 for d in bleu})
    model_dir, report = export_reusing_fp32(monkeypatch, "bleu-gate", ExportOptions(data_dir=tmp_path))
    assert report.ok is False and read_report(model_dir)["ok"] is False
    assert [f for f in report.failures if "int8" in f] == [
        "int8 loses 0.73 BLEU (limit 0.5); try `--precision fp32` or another int8 scheme (--per-tensor, "
        "--weight-bits, --weight-type, --keep-fp32)"]
    assert not any("BLEU" in w for w in report.warnings)  # a failure, not a warning


@pytest.mark.parametrize("deltas, agreement, failures, warnings", [
    ({"de-en": -0.6, "en-de": 0.1}, 0.9, ["int8 loses 0.60 BLEU (limit 0.5)"], []),
    ({"de-en": 0.0, "en-de": -0.3}, 0.9, [], ["int8 loses 0.30 BLEU (target <= 0.2)"]),
    ({"de-en": 0.1, "en-de": -0.2}, 0.8, [], ["int8 greedy output identical to fp32 for 80.0% of sentences "
                                               "(target >= 85%"]),
    ({"de-en": 0.1, "en-de": 0.0}, 0.85, [], []),
], ids=["past-limit", "past-target", "low-agreement", "met"])
def test_int8_verdict_fails_past_the_limit_and_warns_past_the_targets(deltas, agreement, failures, warnings):
    from export.quality import translation_int8_verdict

    got_failures, got_warnings = translation_int8_verdict({"bleu_delta": deltas, "agreement": agreement})
    for got, wanted in ((got_failures, failures), (got_warnings, warnings)):
        assert len(got) == len(wanted) and all(g.startswith(w) for g, w in zip(got, wanted, strict=True)), got


@pytest.mark.parametrize("int8_embeddings", [False, True])
def test_per_row_int8_keeps_the_embedding_tables_fp32_unless_asked(tmp_path, int8_embeddings):
    """The no-VNNI default (per-row MatMulIntegers) leaves the embedding Gathers on fp32 tables (measured more
    faithful: 85.9% against 82.5% of held-out greedy outputs identical to fp32); int8_embeddings makes int8 tables
    (the page's smaller files: web/build.py). The file says which, and every weight MatMul is int8 either way."""
    from export.quantize import META_INT8_EMBEDDINGS
    model_dir, _, _ = loaded("sentiment")
    path = tmp_path / "classifier.int8.onnx"
    quantize_int8(model_dir / "onnx" / "classifier.fp32.onnx", path, int8_embeddings=int8_embeddings)
    graph = onnx.load(str(path))
    tables = {i.name: i.data_type for i in graph.graph.initializer}
    gathered = [tables[n.input[0]] for n in graph.graph.node if n.op_type == "Gather" and n.input[0] in tables]
    assert gathered, "no embedding Gather on an initializer"
    kinds = {onnx.TensorProto.FLOAT: "fp32", onnx.TensorProto.UINT8: "int8", onnx.TensorProto.INT8: "int8"}
    assert {kinds.get(t, t) for t in gathered} == {"int8" if int8_embeddings else "fp32"}
    assert {p.key: p.value for p in graph.metadata_props}[META_INT8_EMBEDDINGS] == \
        ("int8" if int8_embeddings else "fp32")
    assert "MatMulInteger" in {n.op_type for n in graph.graph.node}
