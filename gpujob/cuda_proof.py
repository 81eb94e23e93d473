"""The CUDA proof (the cuda window's last call): onnxruntime's CUDAExecutionProvider against PyTorch on the shipped
models, then a latency table.

- Parity: greedy tokens of the translator, both directions, on the 100 held-out test pairs of its samples.tsv,
  PyTorch (on the GPU) against onnxruntime fp32 on the accelerated provider; the classifier's labels on its
  samples.tsv. Equal tokens are the bar (fp32 both sides); the first differences are kept for the report.
- Latency: PyTorch, onnxruntime fp32 (and fp16, made here from the fp32 graphs, only if it loads and agrees on at
  least `FP16_AGREEMENT` of the sentences), onnxruntime CPU; batch 1 and 16; greedy and beam 4; each case's median
  over `repeats` rounds after a warm-up, the systems interleaved in every round.

On a machine without CUDA (the rehearsal) the same code runs with the CPU provider in the accelerated seat, and the
report says so: `accelerated` names the provider that really ran (the session's, not the one asked for).
"""
from __future__ import annotations

import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from runtime import OnnxSentimentClassifier, OnnxTranslator
from runtime.providers import CUDA
from runtime.tsv import read_tsv
from tx.inference import SentimentAnalyzer, Translator

FP16_AGREEMENT = 0.95  # fp16 joins the table only if its greedy tokens equal fp32's on this share of sentences
CASES = (("greedy", 1), ("greedy", 16), ("beam", 1), ("beam", 16))  # (method, batch)
BEAM = 4


def held_out(model_dir: Path, limit: int = 100) -> list[dict[str, str]]:
    """The model's samples.tsv rows: held-out test pairs (translator) or reviews (classifier)."""
    rows = read_tsv(model_dir / "samples.tsv")[:limit]
    if not rows:
        raise ValueError(f"{model_dir / 'samples.tsv'}: no rows")
    return rows


def greedy_tokens(translator, texts: list[str], src: str, tgt: str) -> list[list[int]]:
    return [t.token_ids for t in translator.translate(texts, src, tgt, method="greedy")]


def translation_parity(reference, other, rows: list[dict[str, str]]) -> dict[str, Any]:
    """Greedy tokens of `other` against `reference`, both directions: equal count, total, first differences."""
    equal, total, differ = 0, 0, []
    for src, tgt in (("de", "en"), ("en", "de")):
        texts = [r[src] for r in rows]
        for text, a, b in zip(texts, greedy_tokens(reference, texts, src, tgt), greedy_tokens(other, texts, src, tgt),
                              strict=True):
            total += 1
            if list(a) == list(b):
                equal += 1
            elif len(differ) < 5:
                differ.append({"direction": f"{src}-{tgt}", "text": text, "reference": list(a), "other": list(b)})
    return {"equal": equal, "total": total, "first_differences": differ}


def classifier_parity(reference, other, rows: list[dict[str, str]]) -> dict[str, Any]:
    texts = [r["text"] for r in rows]
    a, b = reference.classify(texts), other.classify(texts)
    gaps = [max(abs(x.probs[k] - y.probs[k]) for k in x.probs) for x, y in zip(a, b, strict=True)]
    return {"equal": sum(x.label == y.label for x, y in zip(a, b, strict=True)), "total": len(texts),
            "max_prob_gap": max(gaps)}


def fp16_copy(model_dir: Path, out_dir: Path) -> Path:
    """model_dir with every fp32 ONNX graph converted to fp16 inside (inputs and outputs kept fp32), so the runtime
    loads it unchanged; raises when the conversion is not available or fails."""
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    shutil.copytree(model_dir, out_dir, ignore=shutil.ignore_patterns("*int8*"))
    for path in sorted((out_dir / "onnx").glob("*.onnx")):
        onnx.save(convert_float_to_float16(onnx.load(str(path)), keep_io_types=True), str(path))
    return out_dir


def median_ms(rounds: list[float]) -> float:
    return round(statistics.median(rounds) * 1000, 2)


def time_cases(systems: dict[str, Any], texts: list[str], repeats: int, warmup: int = 2
               ) -> dict[str, dict[str, float]]:
    """{system: {case: median ms}}: every case's systems interleaved in each round (rotating order)."""
    out: dict[str, dict[str, float]] = {name: {} for name in systems}
    for method, batch in CASES:
        case = f"{method} b{batch}"
        rounds: dict[str, list[float]] = {name: [] for name in systems}
        names = list(systems)
        for index in range(warmup + repeats):
            chunk = [texts[(index * batch + i) % len(texts)] for i in range(batch)]
            for name in names[index % len(names):] + names[:index % len(names)]:
                started = time.perf_counter()
                systems[name].translate(chunk, "de", "en", method=method, beam=BEAM)
                if index >= warmup:
                    rounds[name].append(time.perf_counter() - started)
        for name in systems:
            out[name][case] = median_ms(rounds[name])
    return out


def device_name() -> str:
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"no GPU: CPU ({platform.machine()})"


def run_proof(models: Path, repeats: int = 10, sentences: int = 100, log: Callable[[str], None] = print
              ) -> dict[str, Any]:
    """Parity on both shipped models, then the latency table; returns the report (cuda_proof.json)."""
    import onnxruntime as ort

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    translate_dir, sentiment_dir = models / "translate", models / "sentiment"
    rows = held_out(translate_dir, sentences)
    torch_translator = Translator.from_dir(translate_dir)
    torch_translator.model.to(device).eval()
    ort_fp32 = OnnxTranslator(translate_dir, provider="auto", precision="fp32")
    accelerated = ort_fp32.provider
    log(f"{device_name()}; onnxruntime {ort.__version__}, provider {accelerated}; torch {torch.__version__}")
    report: dict[str, Any] = {"gpu": device_name(), "accelerated": accelerated, "cuda": accelerated == CUDA,
                              "versions": {"onnxruntime": ort.__version__, "torch": torch.__version__}}
    report["translate_parity"] = translation_parity(torch_translator, ort_fp32, rows)
    log(f"translate parity: {report['translate_parity']['equal']} of {report['translate_parity']['total']} greedy "
        "outputs token for token")
    classifier = SentimentAnalyzer.from_dir(sentiment_dir)
    classifier.model.to(device)
    report["sentiment_parity"] = classifier_parity(
        _DeviceClassifier(classifier, device), OnnxSentimentClassifier(sentiment_dir, provider="auto"),
        held_out(sentiment_dir, sentences))
    log(f"sentiment parity: {report['sentiment_parity']}")
    systems: dict[str, Any] = {f"PyTorch {device.type.upper()} fp32": torch_translator,
                               f"onnxruntime {short(accelerated)} fp32": ort_fp32}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            fp16 = OnnxTranslator(fp16_copy(translate_dir, Path(tmp) / "fp16"), provider="auto", precision="fp32")
            agreement = translation_parity(ort_fp32, fp16, rows)
            report["fp16"] = {"equal": agreement["equal"], "total": agreement["total"]}
            if agreement["equal"] >= FP16_AGREEMENT * agreement["total"]:
                systems[f"onnxruntime {short(fp16.provider)} fp16"] = fp16
            else:
                report["fp16"]["left_out"] = f"greedy tokens equal fp32's on fewer than {FP16_AGREEMENT:.0%}"
        except Exception as e:  # noqa: BLE001 (fp16 is optional: whatever stops it goes in the report, in words)
            report["fp16"] = {"left_out": f"{type(e).__name__}: {str(e)[:300]}"}
        log(f"fp16: {report['fp16']}")
        if accelerated != "CPUExecutionProvider":
            systems["onnxruntime CPU fp32"] = OnnxTranslator(translate_dir, provider="cpu", precision="fp32")
        report["latency_ms"] = time_cases(systems, [r["de"] for r in rows], repeats)
    report["repeats"] = repeats
    return report


def short(provider: str) -> str:
    return provider.removesuffix("ExecutionProvider")


class _DeviceClassifier:
    """SentimentAnalyzer whose model sits on `device`: its ids are moved there and the logits back."""

    def __init__(self, analyzer: SentimentAnalyzer, device: torch.device):
        self.analyzer, self.device = analyzer, device

    def classify(self, texts):
        original = self.analyzer.model.classify

        def on_device(ids, mask, need_weights):
            logits, weights = original(ids.to(self.device), mask.to(self.device), need_weights)
            return logits.cpu(), None if weights is None else [w.cpu() for w in weights]

        self.analyzer.model.classify = on_device
        try:
            return self.analyzer.classify(texts)
        finally:
            del self.analyzer.model.classify


def render_markdown(report: dict[str, Any]) -> str:
    """The README's latency section body: the GPU, parity, and the table (median ms per call)."""
    t, s = report["translate_parity"], report["sentiment_parity"]
    cases = [f"{m} b{b}" for m, b in CASES]
    lines = [f"Measured by `python -m gpujob cuda-proof` on **{report['gpu']}** (onnxruntime "
             f"{report['versions']['onnxruntime']}, provider {report['accelerated']}; torch "
             f"{report['versions']['torch']}); median of {report['repeats']} interleaved rounds, DE→EN held-out "
             "sentences, beam 4.",
             "",
             f"Parity, fp32: translator greedy tokens equal on **{t['equal']} of {t['total']}** held-out sentences "
             f"(both directions); classifier labels equal on {s['equal']} of {s['total']} (largest probability gap "
             f"{s['max_prob_gap']:.1e}). fp16: " + (f"{report['fp16']['equal']} of {report['fp16']['total']} equal "
                                                    "to fp32" if "equal" in report["fp16"] else "")
             + (f" (left out: {report['fp16']['left_out']})" if "left_out" in report["fp16"] else ""),
             "",
             "| system | " + " | ".join(cases) + " |",
             "| --- | " + " | ".join("--:" for _ in cases) + " |"]
    for name, row in report["latency_ms"].items():
        lines.append(f"| {name} | " + " | ".join(f"{row[c]:.1f} ms" for c in cases) + " |")
    return "\n".join(lines) + "\n"


SECTION = "## Latency on a GPU"


def record_section(markdown_file: Path, body: str, heading: str = SECTION) -> None:
    """Put `body` under `heading` in markdown_file: the section replaced up to the next `## ` heading, or added at
    the end when absent."""
    text = markdown_file.read_text(encoding="utf-8") if markdown_file.is_file() else ""
    lines = text.splitlines()
    if heading in lines:
        start = lines.index(heading)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines[start:end] = [heading, *body.rstrip("\n").splitlines(), ""]
        text = "\n".join(lines).rstrip("\n") + "\n"
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + heading + "\n" + body
    markdown_file.write_text(text, encoding="utf-8")
