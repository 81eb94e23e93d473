"""What the three tasks share: the run's settings, a tokenizer, fixed train and valid batches, the model config
(the run's model settings with what the tokenizer fixes), one pass over the valid batches, and the files a
checkpoint and a model directory carry.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from runtime.batching import pad

from ..batching import token_batches
from ..checkpoint import save_model_dir
from ..tokenizer import Tokenizer

Batch = dict[str, torch.Tensor]
Rows = list[dict[str, str]]


def padded(rows: list[list[int]], pad_id: int) -> torch.Tensor:
    return torch.from_numpy(pad(rows, pad_id)[0])  # (B, S) int64


def perplexity(loss: float) -> float:
    return min(float(torch.tensor(loss).exp()), 1e9)


class TextTask:
    """A task over tokenised text (`tx.trainer.Task` says what the Trainer asks of it). A subclass reads its rows,
    settles its tokenizer (the checkpoint's on resume, a source model's, or one trained on its train split) and
    calls `setup`; it defines `make_batches`, `loss` and `evaluate`."""

    name: str  # the task, as `python -m tx train` names it and its model directory's meta records
    score_name: str  # the metric that picks the best checkpoint (higher is better)
    cfg: Any  # its TrainConfig subclass, with the nested `model` config

    def setup(self, tokenizer: Tokenizer, meta: dict[str, Any], train: Rows, valid: Rows, what: str,
              quiet: bool) -> None:
        """Keep the tokenizer and meta; batch train in the run's seeded order and valid in one fixed order."""
        self.tokenizer, self.meta = tokenizer, {"task": self.name, **meta}
        self.batches = self.make_batches(train, self.cfg.batch_tokens, self.cfg.seed)
        self.valid_batches = self.make_batches(valid, self.cfg.batch_tokens, 0)
        if not quiet:
            print(f"{self.name}: {what}, {len(self.batches):,} batches; vocab {tokenizer.vocab_size:,}", flush=True)

    def id_batches(self, ids: list[list[int]], max_tokens: int, seed: int, max_rows: int,
                   labels: list[int] | None = None) -> list[Batch]:
        """Length-bucketed batches of padded `input_ids` (and `labels`, one per row, when given)."""
        groups = token_batches([len(x) for x in ids], max_tokens, seed, max_rows=max_rows)
        return [{"input_ids": padded([ids[i] for i in g], self.tokenizer.pad_id),
                 **({"labels": torch.tensor([labels[i] for i in g])} if labels is not None else {})} for g in groups]

    def model_config(self, **fixed: Any) -> Any:
        """The run's model settings, with what the data fixes: the trained tokenizer's size and pad id (+ `fixed`)."""
        return replace(self.cfg.model, vocab_size=self.tokenizer.vocab_size, pad_id=self.tokenizer.pad_id, **fixed)

    @torch.no_grad()
    def valid_pass(self, model: nn.Module, scored: Callable[[nn.Module, Batch], tuple[torch.Tensor, torch.Tensor]]
                   ) -> tuple[float, int, int]:
        """(summed cross-entropy, correct argmaxes, count) over the valid batches; `scored(model, batch)` (the
        batch on the model's device) gives the (logits (N, C), targets (N,)) that count."""
        model.eval()
        device = next(model.parameters()).device
        total, correct, count = 0.0, 0, 0
        for batch in self.valid_batches:
            logits, target = scored(model, {k: v.to(device) for k, v in batch.items()})
            logits = logits.float()
            total += F.cross_entropy(logits, target, reduction="sum").item()
            correct += int((logits.argmax(-1) == target).sum())
            count += target.numel()
        return total, correct, count

    def checkpoint_extra(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer.to_str(), "meta": self.meta}

    def save_model_dir(self, model: nn.Module, directory: Path) -> None:
        save_model_dir(directory, model, self.tokenizer.to_str(), self.meta)
