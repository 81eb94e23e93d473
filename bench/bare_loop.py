"""The issue's reference: a bare training loop over `tx.Seq2SeqTransformer` (d_model 64, 2+2 layers, 4 heads,
batch 64, Adam with warm-up, 2 threads; pre-LN and lr 2e-3 as the engine's defaults) on copy or reverse, length 10,
vocabulary 10: no events, no snapshots, no process of its own, only an exact-match evaluation on 200 held-out
sequences every 50 steps to know when it got there. The gap between its time to 99% and the engine's
(`tx.toy.engine` through the page's worker) is the page's overhead; `python -m bench training_page` prints both.

    python -m bench bare_loop copy|reverse [SECONDS]   -> one JSON line: {"task", "seconds_to_99", "step", ...}
"""
from __future__ import annotations

import json
import time

import torch
import torch.nn.functional as F

from tx.config import Seq2SeqConfig
from tx.model import Seq2SeqTransformer
from tx.toy.engine import greedy
from tx.trainer import inverse_sqrt_schedule

from . import bench_parser

PAD, BOS, EOS, FIRST = 0, 1, 2, 3  # symbols are ids FIRST..FIRST+9
LENGTH, VOCAB, BATCH, EVAL_EVERY = 10, 10, 64, 50


def make(task: str, n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    src = torch.randint(FIRST, FIRST + VOCAB, (n, LENGTH), generator=generator)
    return src, (src if task == "copy" else src.flip(1))


def bare_loop(task: str, max_seconds: float = 60.0, threads: int = 2, seed: int = 0) -> dict:
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = Seq2SeqTransformer(Seq2SeqConfig(vocab_size=FIRST + VOCAB, d_model=64, n_heads=4, n_layers=2, d_ff=256,
                                             dropout=0.0, max_len=LENGTH + 2, pre_norm=True))  # the engine's default
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3, betas=(0.9, 0.98), eps=1e-9)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, inverse_sqrt_schedule(100))
    held_src, held_tgt = make(task, 200, generator)
    eos = torch.full((BATCH, 1), EOS)
    bos = torch.full((BATCH, 1), BOS)
    started, step, accuracy = time.monotonic(), 0, 0.0
    while time.monotonic() - started < max_seconds:
        src, tgt = make(task, BATCH, generator)
        logits = model(src, torch.cat([bos, tgt], 1))  # (B, T+1, V)
        loss = F.cross_entropy(logits.flatten(0, 1), torch.cat([tgt, eos], 1).flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        if step % EVAL_EVERY == 0:
            model.eval()
            outputs = greedy(model, held_src, LENGTH, BOS, EOS)
            model.train()
            accuracy = sum(out == want for out, want in zip(outputs, held_tgt.tolist(), strict=True)) / 200
            if accuracy >= 0.99:
                break
    seconds = time.monotonic() - started
    return {"task": task, "reached": accuracy >= 0.99, "accuracy": accuracy, "step": step,
            "seconds_to_99": round(seconds, 2) if accuracy >= 0.99 else None, "seconds": round(seconds, 2),
            "threads": threads}



def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("bare_loop")
    parser.add_argument("task", choices=("copy", "reverse"))
    parser.add_argument("seconds", nargs="?", type=float, default=60.0, help="time cap (default 60)")
    args = parser.parse_args(argv)
    print(json.dumps(bare_loop(args.task, args.seconds)))
    return 0
