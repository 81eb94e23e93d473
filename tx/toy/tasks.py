"""Toy sequence tasks, generated on the fly, and the user's own pairs; each gives token lists, never tensors.

- copy: the target is the source (attention learns the diagonal);
- reverse: the source backwards (the anti-diagonal; impossible without positional encoding);
- sort: the source's symbols in ascending order (a bag of tokens suffices: it learns without positions);
- add: two numbers written as digits, "4 0 7 + 1 9 5" -> "0 6 0 2", the sum fixed-width and most significant
  digit first, so each output digit needs the two digits in its column and a carry from the columns after it;
- file: pairs from the user's TSV/CSV (checked by `runtime.toy.parse`).

Held-out examples are fixed by the seed and never drawn for training, so exact match on them measures
generalisation, not memory.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from runtime.toy import ParallelData

Example = tuple[list[str], list[str]]  # (source tokens, target tokens)
SYNTHETIC = ("copy", "reverse", "sort", "add")
TASKS = (*SYNTHETIC, "file")
HELD_OUT = 200  # held-out examples scored at every evaluation (fewer when the task has few distinct ones)


@dataclass
class SyntheticTask:
    """One of SYNTHETIC over `vocab` symbols ("0".."vocab-1"), sources of `length` symbols (digits per number
    for "add", whose vocabulary is always the ten digits)."""

    name: str
    length: int
    vocab: int

    def __post_init__(self) -> None:
        if self.name not in SYNTHETIC:
            raise ValueError(f"unknown task {self.name!r}: choose one of {', '.join(TASKS)}")
        if not 1 <= self.length <= 32:
            raise ValueError(f"length must be 1..32, got {self.length}")
        if not 2 <= self.vocab <= 100:
            raise ValueError(f"vocabulary must be 2..100 symbols, got {self.vocab}")

    @property
    def symbols(self) -> list[str]:
        digits = 10 if self.name == "add" else self.vocab
        return [str(i) for i in range(digits)] + (["+"] if self.name == "add" else [])

    def distinct(self) -> int:
        """How many different sources exist (held-out sets of small tasks must leave some to train on)."""
        return 10 ** (2 * self.length) if self.name == "add" else self.vocab ** self.length

    def example(self, rng: random.Random) -> Example:
        if self.name == "add":
            a, b = (rng.randrange(10 ** self.length) for _ in range(2))
            digits = [list(str(n).zfill(self.length)) for n in (a, b)]
            return digits[0] + ["+"] + digits[1], list(str(a + b).zfill(self.length + 1))
        source = [str(rng.randrange(self.vocab)) for _ in range(self.length)]
        if self.name == "copy":
            return source, list(source)
        if self.name == "reverse":
            return source, source[::-1]
        return source, sorted(source, key=int)


class ExampleSource:
    """Training batches drawn on the fly and a fixed held-out set, for a synthetic task or the user's pairs."""

    def __init__(self, task: SyntheticTask | ParallelData, seed: int):
        self.task = task
        rng = random.Random(seed)
        if isinstance(task, ParallelData):
            pairs = list(task.pairs)
            rng.shuffle(pairs)
            n_held = max(1, min(HELD_OUT, len(pairs) // 10))
            self.held_out, self.train_pairs = pairs[:n_held], pairs[n_held:]
        else:
            n_held = min(HELD_OUT, task.distinct() // 5)
            held: dict[tuple[str, ...], Example] = {}
            while len(held) < n_held:
                src, tgt = task.example(rng)
                held[tuple(src)] = (src, tgt)
            self.held_out, self.train_pairs = list(held.values()), None
            self._held_keys = set(held)
        self.rng = random.Random(seed + 1)

    @property
    def symbols(self) -> list[str]:
        return self.task.vocabulary if isinstance(self.task, ParallelData) else self.task.symbols

    @property
    def max_source_len(self) -> int:
        """Tokens per source at most (before the model's tag and </s>)."""
        if isinstance(self.task, ParallelData):
            return max(len(s) for s, _ in self.task.pairs)
        return 2 * self.task.length + 1 if self.task.name == "add" else self.task.length

    @property
    def max_target_len(self) -> int:
        if isinstance(self.task, ParallelData):
            return max(len(t) for _, t in self.task.pairs)
        return self.task.length + 1 if self.task.name == "add" else self.task.length

    def batch(self, size: int) -> list[Example]:
        """`size` training examples, none of them held out."""
        if self.train_pairs is not None:
            return [self.rng.choice(self.train_pairs) for _ in range(size)]
        out = []
        while len(out) < size:
            src, tgt = self.task.example(self.rng)
            if tuple(src) not in self._held_keys:
                out.append((src, tgt))
        return out

    def probe(self) -> Example:
        """The fixed input whose attention maps are recorded during training: the first held-out example."""
        return self.held_out[0]
