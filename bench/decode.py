"""python -m bench decode [--model-dir DIR]: decoding speed with and without the KV cache.

Greedy and beam 4, batch 1 and 16, each through `TorchBackend` (KV cache) and
`FullPrefixBackend` (whole prefix recomputed every step), on a fixed set of sentences.
Without a model directory it uses a randomly initialised model of the default size
(fixed seed) and random source ids. EOS is masked for the first `--min-len` tokens so
every sentence decodes at least that many, the regime where the cache should pay off.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from runtime.batching import pad
from runtime.decoding import beam_search, greedy
from tx.config import Seq2SeqConfig
from tx.decoding import FullPrefixBackend, TorchBackend
from tx.evaluation import BENCH_SENTENCES
from tx.inference import Translator
from tx.model import Seq2SeqTransformer
from tx.tokenizer import BOS, EOS, SPECIALS

from . import bench_parser

BOS_ID, EOS_ID = SPECIALS.index(BOS), SPECIALS.index(EOS)  # every tokenizer's ids; a random model uses them too


@dataclass
class Case:
    method: str
    batch: int
    cached: bool
    seconds: float
    sentences: int
    tokens: int  # target tokens generated (best hypothesis per sentence, EOS included)

    @property
    def sentences_per_s(self) -> float:
        return self.sentences / self.seconds

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds


def model_and_sources(model_dir: str | None, n_sentences: int, seed: int) -> tuple[Seq2SeqTransformer, list[list[int]]]:
    """The model to time and the source id lists (tag and EOS included) to decode."""
    if model_dir is not None:
        translator = Translator.from_dir(model_dir)
        texts = (BENCH_SENTENCES * (n_sentences // len(BENCH_SENTENCES) + 1))[:n_sentences]
        return translator.model, [translator.source_ids(text, "en")[0] for text in texts]
    torch.manual_seed(seed)
    model = Seq2SeqTransformer(Seq2SeqConfig(vocab_size=8000)).eval()
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(8, 30, (n_sentences,), generator=g).tolist()
    return model, [torch.randint(6, 8000, (n,), generator=g).tolist() for n in lengths]


def time_case(search: Callable, backend, sources: list[list[int]], batch: int, min_len: int, max_len: int,
              repeats: int) -> tuple[float, int]:
    """Best-of-`repeats` seconds to decode every source in batches of `batch`, and tokens generated."""
    best, tokens = float("inf"), 0
    for _ in range(repeats):
        start, tokens = time.perf_counter(), 0
        for i in range(0, len(sources), batch):
            ids, mask = pad(sources[i:i + batch], 0)
            hyps = search(backend, ids, mask, max_len, BOS_ID, EOS_ID, min_len=min_len)
            tokens += sum(len(h.tokens) for h in hyps)
        best = min(best, time.perf_counter() - start)
    return best, tokens


def run(model: Seq2SeqTransformer, sources: list[list[int]], min_len: int, max_len: int, repeats: int) -> list[Case]:
    searches = {"greedy": greedy, "beam 4": lambda *a, **kw: beam_search(*a, beam=4, length_penalty=0.6, **kw)}
    backends = {True: TorchBackend(model), False: FullPrefixBackend(model)}
    time_case(greedy, backends[True], sources[:2], 2, 2, 4, 1)  # warm-up: first calls allocate
    cases = []
    for method, search in searches.items():
        for batch in (1, 16):
            for cached, backend in backends.items():
                seconds, tokens = time_case(search, backend, sources, batch, min_len, max_len, repeats)
                cases.append(Case(method, batch, cached, seconds, len(sources), tokens))
    return cases


def format_table(cases: list[Case]) -> str:
    lines = [f"{'method':<8} {'batch':>5} {'KV cache':>8} {'sent/s':>8} {'tok/s':>8} {'tok/sent':>8} {'speed-up':>8}",
             "-" * 61]
    by_key = {(c.method, c.batch, c.cached): c for c in cases}
    for c in cases:
        uncached = by_key[(c.method, c.batch, False)]
        speedup = f"{c.tokens_per_s / uncached.tokens_per_s:.2f}x" if c.cached else ""
        lines.append(f"{c.method:<8} {c.batch:>5} {'yes' if c.cached else 'no':>8} {c.sentences_per_s:>8.2f} "
                     f"{c.tokens_per_s:>8.1f} {c.tokens / c.sentences:>8.1f} {speedup:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("decode", __doc__)
    parser.add_argument("--model-dir", help="a translation model directory; default: random-init default-size model")
    parser.add_argument("--sentences", type=int, default=16, help="sentences decoded per case (default 16)")
    parser.add_argument("--min-len", type=int, default=30, help="EOS is masked until this many target tokens")
    parser.add_argument("--max-len", type=int, default=40, help="most target tokens per sentence")
    parser.add_argument("--repeats", type=int, default=2, help="time each case this many times, keep the best")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 1 <= args.min_len <= args.max_len:
        parser.error("need 1 <= --min-len <= --max-len")
    torch.set_num_threads(args.threads)
    model, sources = model_and_sources(args.model_dir, args.sentences, args.seed)
    c = model.config
    print(f"model: {args.model_dir or 'random init'} (d_model {c.d_model}, {c.n_layers}+{c.n_decoder_layers} layers, "
          f"vocab {c.vocab_size}); {len(sources)} sentences, {args.min_len}-{args.max_len} target tokens, "
          f"{args.threads} threads")
    cases = run(model, sources, args.min_len, args.max_len, args.repeats)
    print(format_table(cases))
    greedy_cases = [x for x in cases if x.method == "greedy" and x.cached]
    for case in greedy_cases:
        uncached = next(x for x in cases if x.method == "greedy" and x.batch == case.batch and not x.cached)
        print(f"greedy batch {case.batch}: KV cache {case.tokens_per_s / uncached.tokens_per_s:.2f}x the full-prefix "
              f"recompute (goal >= 1.5x)")
    return 0
