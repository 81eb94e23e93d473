"""`python -m bench runtimes` on the tiny exports: the table and bench.json it writes (the file the app's Latency
page and model card read), a translation subset, the case filter."""
from __future__ import annotations

import importlib.util
import json

import onnx
import onnxruntime as ort
import pytest
import torch
from export_fixtures import (
    exported,
    fresh_copy,
)

pytestmark = pytest.mark.exports


# --- python -m bench runtimes ----------------------------------------------------------------------------------------


def check_bench(bench: dict, task: str, cases: list[str]) -> None:
    assert bench["task"] == task and bench["threads"] == 1 and bench["provider"] == "CPUExecutionProvider"
    assert bench["versions"]["onnxruntime"] == ort.__version__ and bench["versions"]["torch"] == torch.__version__
    systems = ["torch", "ort-fp32", "ort-int8"]
    if task == "translate" and importlib.util.find_spec("ctranslate2"):  # the optional peer, on the same weights
        systems += ["ct2-fp32", "ct2-int8"]
    assert [(r["case"], r["system"]) for r in bench["results"]] == [(case, s) for case in cases for s in systems]
    for r in bench["results"]:
        assert 0 < r["p10_ms"] <= r["p50_ms"] <= r["p90_ms"] and r["tokens_per_s"] > 0 and r["speedup"] > 0
        if r["system"].startswith("ort-") and "ct2-fp32" in systems:
            peer = next(x for x in bench["results"] if x["case"] == r["case"] and x["system"] == r["system"].replace(
                "ort-", "ct2-"))
            assert r["vs_ct2"] == pytest.approx(peer["p50_ms"] / r["p50_ms"], rel=0.02, abs=0.006)
        if r["system"] == "torch":
            assert r["speedup"] == 1.0
        torch_p50 = next(x["p50_ms"] for x in bench["results"] if x["case"] == r["case"] and x["system"] == "torch")
        assert r["speedup"] == pytest.approx(torch_p50 / r["p50_ms"], rel=0.02)
    assert isinstance(bench["distrusted"], list)
    assert set(bench["targets"]) == {f"{'translate greedy' if task == 'translate' else 'classifier b1 <=64'} {p}"
                                     for p in ("fp32", "int8")}
    assert 0.0 <= bench["int8_quality"]["agreement"] <= 1.0


def test_bench_classifier_table_and_json(capsys):
    model_dir = fresh_copy("sentiment", "bench")
    from bench import runtimes as bench_cli

    threads = torch.get_num_threads()
    assert bench_cli.main([str(model_dir), "--threads", "1", "--repeats", "3", "--warmup", "1"]) == 0
    assert torch.get_num_threads() == threads  # the benchmark gives the thread count back
    out = capsys.readouterr().out
    bench = json.loads((model_dir / "onnx" / "bench.json").read_text())
    # the fixture's positional table has 64 positions: the 256-token case becomes a second b1x64, measured once
    check_bench(bench, "sentiment", ["b1x16", "b1x64", "b32x64"])
    b1x16 = next(r for r in bench["results"] if r["case"] == "b1x16" and r["system"] == "ort-fp32")
    assert b1x16["tokens_per_s"] == pytest.approx(16 / (b1x16["p50_ms"] / 1e3), rel=0.01)
    assert "| case | system | p50 ms | p10-p90 ms | tokens/s | × torch | ÷ CTranslate2 |" in out
    assert f"| b1x16 | ort-fp32 | {b1x16['p50_ms']:.2f} | {b1x16['p10_ms']:.1f}-{b1x16['p90_ms']:.1f} |" in out
    assert "onnxruntime on CPUExecutionProvider" in out and f"onnxruntime {ort.__version__}" in out
    assert "target classifier b1 <=64 int8: >= 5.0x, reached" in out
    assert set(bench["fusions"]) == {"classifier.fp32.onnx", "classifier.int8.onnx"}
    # the int8 MatMuls run as the scheme this CPU got (export/quantize.py, default_scheme): with VNNI, onnxruntime's
    # blockwise (or dynamic) int8 kernels, contrib ops the bench lists; without it, u8 x u8 MatMulInteger with
    # activations per row, a standard op that no fused kernel replaces (its per-row scales), so read from the file
    scheme = json.loads((model_dir / "onnx" / "export_report.json").read_text())["int8"]
    if scheme["block_size"]:
        int8_kernels = {"MatMulIntegerToFloat", "DynamicQuantizeMatMul", "MatMulNBits"}
        assert int8_kernels & set(bench["fusions"]["classifier.int8.onnx"])
    else:
        ops = [node.op_type for node in onnx.load(model_dir / "onnx" / "classifier.int8.onnx").graph.node]
        assert scheme["weight_type"] == "uint8" and ops.count("MatMulInteger") >= 4, ops


def test_bench_translation_subset(tmp_path, capsys):
    from bench import runtimes as bench_cli

    out_json = tmp_path / "all.json"
    assert bench_cli.main([str(exported("translate")), "--threads", "1", "--repeats", "2", "--warmup", "1",
                           "--cases", "greedy-b1,beam4-b1", "--max-len", "4", "--no-fusions",
                           "--json", str(out_json), "--data-dir", str(tmp_path)]) == 0
    [bench] = json.loads(out_json.read_text())
    check_bench(bench, "translate", ["greedy-b1", "beam4-b1"])
    assert bench["direction"] == "de-en" and bench["max_len"] == 4 and "fusions" not in bench
    assert bench["patience"] == 1.0 and any("4 x 1.0 hypotheses" in note for note in bench["notes"])
    assert bench["sentences"].endswith("samples.tsv")
    greedy_torch = bench["results"][0]
    assert greedy_torch["tokens_per_s"] <= 4 / (greedy_torch["p50_ms"] / 1e3) * 1.01  # at most 4 tokens a call
    out = capsys.readouterr().out
    assert "translating de-en" in out and "| greedy-b1 | ort-int8 |" in out
    assert not (exported("translate") / "onnx" / "bench.json").exists()  # --json: nothing in the model dir
    with pytest.raises(SystemExit):
        bench_cli.main([str(exported("translate")), "--cases", "greedy-b3"])
    for bad in ("0", "soon"):
        with pytest.raises(SystemExit):
            bench_cli.main([str(exported("translate")), "--patience", bad])


def test_bench_case_filter_uses_the_requested_names(tmp_path):
    from bench import runtimes as bench_cli

    out_json = tmp_path / "b.json"
    assert bench_cli.main([str(exported("sentiment")), "--cases", "b1x256", "--repeats", "1", "--warmup", "0",
                           "--threads", "1", "--no-fusions", "--json", str(out_json)]) == 0
    [bench] = json.loads(out_json.read_text())
    assert [r["case"] for r in bench["results"]] == ["b1x64"] * 3  # 256 tokens capped at the model's 64 positions
