"""Every benchmark, one module each with `main(argv) -> int`: `python -m bench NAME ...` runs one. A benchmark
measures and prints; it is not a test (its numbers depend on the machine and what else runs on it). Benchmarks
may import any package (runtime, tx, export, playground); no library imports a benchmark.
"""
from __future__ import annotations

import argparse

from runtime.cli import command_parser

# name -> what it measures, in one line (`python -m bench --help` lists them; each one's --help starts with its line)
BENCHMARKS = {
    "runtimes": "PyTorch eager vs onnxruntime fp32/int8 (vs CTranslate2) on exported model dirs; writes bench.json",
    "step_overhead": "where a translation's time goes besides the graphs, per decoder step (onnxruntime)",
    "decode": "PyTorch decoding speed with and without the KV cache, greedy and beam 4",
    "train": "training speed of our Seq2SeqTransformer against torch.nn.Transformer",
    "decoding_page": "the Decoding explorer's server time through AppTest (slider redraw, new sentence)",
    "walkthrough_page": "the Walkthrough page's server time through AppTest (redraw, new sentence)",
    "experiments_page": "the Experiments page's server time through AppTest (each experiment, a new sentence)",
    "training_page": "the Train-your-own page's targets: time to 99%, Translate while training, stop to no CPU",
    "experiments": "runtime.experiments on the shipped translator: the head-importance grid and every other call",
    "patching": "activation patching on the shipped translator: the encoder grid on ~20 tokens, the other grids",
    "serve_load": "the Ray Serve service under load: requests/s, p50/p90/p99, errors, memory; faults with --faults",
    "bare_loop": "the reference the Train page is measured against: a bare training loop on copy or reverse",
    "alignment": "which cross-attention (layer, head, mean) agrees with Ding word pairs on held-out sentences",
    "clicks": "click -> result in a real browser: Translate (greedy, int8) and the Walkthrough's Next, with the load",
    "steering": "alternatives at one position (each completed) against plain greedy of the same sentence",
    "export_pair": "two exports of one translator, interleaved: a decoder step and whole translations, before/after",
    "web": "the translator in chromium (onnxruntime-web) vs Python onnxruntime on this CPU: load, first, per sentence",
    "attribution": "deletion AUC of occlusion, saliency, input x gradient, IG, rollout, random on held-out sentences",
}


def bench_parser(name: str, epilog: str | None = None) -> argparse.ArgumentParser:
    """Benchmark `name`'s argument parser: its usage names `python -m bench NAME`, its description is its line."""
    return command_parser("bench", name, BENCHMARKS[name], epilog)
