"""python -m bench train: training speed of our Seq2SeqTransformer against torch.nn.Transformer.

Both models have the same size and recipe: d_model, heads, encoder/decoder layers, d_ff and
dropout; post-LN with no final LayerNorm (ours in post-LN mode has none, so the reference's
encoder/decoder are built with `norm=None`); the same scaled token embedding shared by source,
target and the output Linear, the same sinusoidal positions, label-smoothed cross-entropy, Adam
(β 0.9/0.98, ε 1e-9) and gradient clipping. Each step is a full training step (forward, loss,
backward, clip, optimizer step) on the same batch for both models.

Batches: real ones from `TranslateTask` (length-bucketed under the token budget, both directions)
when `data/processed/translate/train.tsv` exists, using the first `--rows` pairs and a tokenizer
trained on them (or `--tokenizer FILE`); random token ids otherwise (or with `--random`).

Timing is interleaved in one process: warm-up steps for both, then the timed steps alternate
between the models batch by batch (which model goes first alternates too), so a machine that
gets busier or quieter during the run affects both alike. tokens/s counts the padded source and
target tokens of each batch, as the Trainer's progress bar does.
"""
from __future__ import annotations

import math
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from tx.config import Seq2SeqConfig
from tx.layers import PositionalEncoding
from tx.model import Seq2SeqTransformer
from tx.tasks import TranslateConfig, TranslateTask
from tx.tokenizer import BOS, EOS, PAD, SPECIALS, Tokenizer

from . import bench_parser

PAD_ID, BOS_ID, EOS_ID = (SPECIALS.index(t) for t in (PAD, BOS, EOS))  # every tokenizer's ids; random batches too


class ReferenceTransformer(nn.Module):
    """torch.nn.Transformer plus what it lacks for translation: embedding, positions, output Linear."""

    def __init__(self, c: Seq2SeqConfig):
        super().__init__()
        self.pad_id = c.pad_id
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.scale = math.sqrt(c.d_model)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        enc_layer = nn.TransformerEncoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout, batch_first=True)
        dec_layer = nn.TransformerDecoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout, batch_first=True)
        self.transformer = nn.Transformer(
            c.d_model, c.n_heads, dim_feedforward=c.d_ff, dropout=c.dropout, batch_first=True,
            custom_encoder=nn.TransformerEncoder(enc_layer, c.n_layers, norm=None, enable_nested_tensor=False),
            custom_decoder=nn.TransformerDecoder(dec_layer, c.n_decoder_layers, norm=None))
        self.generator = nn.Linear(c.d_model, c.vocab_size, bias=False)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        self.generator.weight = self.embed.weight  # tied, as in ours

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        src_pad = src == self.pad_id  # True = ignore (nn.Transformer's convention, the opposite of ours)
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(1), device=tgt.device)
        hidden = self.transformer(self.positional(self.embed(src) * self.scale),
                                  self.positional(self.embed(tgt) * self.scale),
                                  tgt_mask=causal, src_key_padding_mask=src_pad, memory_key_padding_mask=src_pad,
                                  tgt_is_causal=True)
        return self.generator(hidden)


def random_batches(n: int, vocab: int, batch_tokens: int, mean_len: int, seed: int) -> list[dict[str, Tensor]]:
    """Length-varied random id batches in the TranslateTask layout (src with </s>, <s>+tgt, tgt+</s>)."""
    gen = random.Random(seed)
    batches = []
    for _ in range(n):
        width = max(4, int(gen.gauss(mean_len, mean_len / 3)))
        rows = max(1, batch_tokens // (width + 1))
        src = torch.randint(6, vocab, (rows, width), generator=torch.Generator().manual_seed(gen.randrange(2**31)))
        tgt = torch.randint(6, vocab, (rows, width), generator=torch.Generator().manual_seed(gen.randrange(2**31)))
        for r in range(rows):  # ragged rows: pad the tail of each
            cut_s, cut_t = gen.randint(width // 2, width - 1), gen.randint(width // 2, width)
            src[r, cut_s] = EOS_ID
            src[r, cut_s + 1:] = PAD_ID
            tgt[r, cut_t:] = PAD_ID
        lengths = (tgt != PAD_ID).sum(1)
        tgt_in = torch.cat([torch.full((rows, 1), BOS_ID), tgt], 1)
        labels = torch.cat([tgt, torch.full((rows, 1), PAD_ID)], 1)
        labels[torch.arange(rows), lengths] = EOS_ID
        batches.append({"src_ids": src, "tgt_ids": tgt_in, "labels": labels})
    return batches


def real_batches(data_dir: Path, rows: int, batch_tokens: int, vocab: int, tokenizer: Path | None,
                 seed: int) -> tuple[list[dict[str, Tensor]], int, str]:
    """Batches from TranslateTask on the first `rows` training pairs; (batches, vocab size, description)."""


    lines = (data_dir / "train.tsv").read_text(encoding="utf-8").splitlines()
    header, body = lines[0], lines[1:rows + 1]
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "train.tsv").write_text("\n".join([header, *body]) + "\n", encoding="utf-8")
        (Path(tmp) / "valid.tsv").write_text("\n".join([header, *body[:1]]) + "\n", encoding="utf-8")
        cfg = TranslateConfig(data_dir=tmp, batch_tokens=batch_tokens, seed=seed, model={"vocab_size": vocab})
        task = TranslateTask(cfg, tokenizer=Tokenizer.load(tokenizer) if tokenizer else None, quiet=True)
    how = f"tokenizer {tokenizer}" if tokenizer else "BPE trained on them"
    return task.batches, task.tokenizer.vocab_size, f"{data_dir}/train.tsv, first {len(body):,} pairs × 2 " \
        f"directions, {how} (vocab {task.tokenizer.vocab_size:,})"


def make_step(model: nn.Module, label_smoothing: float, clip: float) -> Callable[[dict[str, Tensor]], None]:
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)

    def step(batch: dict[str, Tensor]) -> None:
        logits = model(batch["src_ids"], batch["tgt_ids"])
        labels = batch["labels"]
        loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(), ignore_index=PAD_ID,
                               label_smoothing=label_smoothing, reduction="sum") / (labels != PAD_ID).sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()

    return step


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("train", __doc__)
    parser.add_argument("--steps", type=int, default=20, help="timed steps per model")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per model first")
    shape = TranslateConfig().model  # the translator's default shape unless told otherwise
    parser.add_argument("--d-model", type=int, default=shape.d_model)
    parser.add_argument("--heads", type=int, default=shape.n_heads)
    parser.add_argument("--layers", type=int, default=shape.n_layers, help="encoder layers")
    parser.add_argument("--decoder-layers", type=int, default=shape.n_decoder_layers)
    parser.add_argument("--d-ff", type=int, default=shape.d_ff)
    parser.add_argument("--dropout", type=float, default=shape.dropout)
    parser.add_argument("--batch-tokens", type=int, default=4000, help="padded tokens per batch (rows × longest)")
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    parser.add_argument("--vocab", type=int, default=shape.vocab_size,
                        help="vocabulary size (random ids / tokenizer training)")
    parser.add_argument("--data-dir", type=Path, default=Path(TranslateConfig.data_dir),
                        help="prepared translation data")
    parser.add_argument("--rows", type=int, default=20000, help="training pairs read for real batches")
    parser.add_argument("--tokenizer", type=Path, help="tokenizer.json to use instead of training one")
    parser.add_argument("--random", action="store_true", help="random token ids even when the data exists")
    parser.add_argument("--mean-len", type=int, default=20, help="random batches: mean sequence length")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    n = args.warmup + args.steps
    if not args.random and (args.data_dir / "train.tsv").is_file():
        pool, vocab, source = real_batches(args.data_dir, args.rows, args.batch_tokens, args.vocab, args.tokenizer,
                                           args.seed)
        batches = [pool[i % len(pool)] for i in range(n)]
    else:
        vocab = args.vocab
        batches = random_batches(n, vocab, args.batch_tokens, args.mean_len, args.seed)
        source = f"random token ids (vocab {vocab:,}, mean length {args.mean_len})"
    max_len = max(max(b["src_ids"].size(1), b["tgt_ids"].size(1)) for b in batches)
    config = Seq2SeqConfig(vocab_size=vocab, d_model=args.d_model, n_heads=args.heads, n_layers=args.layers,
                           n_decoder_layers=args.decoder_layers, d_ff=args.d_ff, dropout=args.dropout,
                           max_len=max(shape.max_len, max_len), pad_id=PAD_ID)
    models = {"ours (tx.Seq2SeqTransformer)": Seq2SeqTransformer(config).train(),
              "torch.nn.Transformer": ReferenceTransformer(config).train()}
    params = {name: sum(p.numel() for p in m.parameters()) for name, m in models.items()}
    steps = {name: make_step(m, 0.1, 1.0) for name, m in models.items()}
    names = list(models)

    print(f"batches: {source}")
    print(f"model: d_model {args.d_model}, {args.heads} heads, {args.layers}+{args.decoder_layers} layers, "
          f"d_ff {args.d_ff}, dropout {args.dropout}, post-LN, tied embeddings; "
          f"{args.batch_tokens} tokens/batch budget; {torch.get_num_threads()} threads; torch {torch.__version__}")
    for i, batch in enumerate(batches[:args.warmup]):
        print(f"\rwarm-up {i + 1}/{args.warmup}", end="", file=sys.stderr, flush=True)
        for name in names:
            steps[name](batch)
    seconds = dict.fromkeys(names, 0.0)
    tokens = 0
    for i, batch in enumerate(batches[args.warmup:]):
        for name in (names if i % 2 == 0 else names[::-1]):
            start = time.perf_counter()
            steps[name](batch)
            seconds[name] += time.perf_counter() - start
        tokens += batch["src_ids"].numel() + batch["tgt_ids"].numel()
        print(f"\rstep {i + 1}/{args.steps}", end="", file=sys.stderr, flush=True)
    print("\r", end="", file=sys.stderr)

    real = sum(int((b["src_ids"] != PAD_ID).sum() + (b["labels"] != PAD_ID).sum()) for b in batches[args.warmup:])
    print(f"{args.steps} timed steps per model after {args.warmup} warm-up; {tokens:,} padded tokens "
          f"({100 * real / tokens:.0f}% real), {tokens / args.steps:,.0f} per step\n")
    print(f"{'model':<30} {'params':>10} {'ms/step':>9} {'tokens/s':>10}")
    for name in names:
        print(f"{name:<30} {params[name] / 1e6:>9.2f}M {1000 * seconds[name] / args.steps:>9.1f} "
              f"{tokens / seconds[name]:>10,.0f}")
    ratio = seconds[names[1]] / seconds[names[0]]
    print(f"\nratio ours / reference (tokens/s): {ratio:.3f}  (goal >= 0.9)")
    return 0
