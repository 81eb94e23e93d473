"""Watching beam search: the events `beam_search(..., observer=...)` reports, and `BeamTree`, the observer that
records every candidate each step ranked as a tree (what the Decoding explorer draws).

The search calls an observer only where one is given (`if observer is not None`), so a search without one does
no extra work.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .hypothesis import length_penalty as gnmt_penalty

NEG_INF = float("-inf")
Candidates = list[tuple[float, int, int]]  # one sentence's ranked candidates, best first: (raw score, row, token)


class BeamObserver(Protocol):
    """What beam search reports, in this order: `begin` once; then per step, for each sentence still in the batch,
    `offered` for each candidate it offers as a finished hypothesis and `ranked` after them; then `step_done`."""

    def begin(self, beam: int, alpha: float) -> None:
        """A search starts: `beam` batch rows per sentence, GNMT length penalty `alpha`."""

    def offered(self, rank: int, status: str, better: bool) -> None:
        """The candidate at `rank` was offered as a hypothesis ("finished": it ends with EOS; "max_len": it
        reached the sentence's max length); `better`: it became the sentence's best so far."""

    def ranked(self, sentence: int, length: int, candidates: Candidates, kept: Sequence[int], live: bool) -> None:
        """The sentence's candidates of this step (`length` tokens each). `kept`: the ranks of those that would go
        on as live beams (best first); `live`: whether they do (False: the sentence stops here)."""

    def step_done(self) -> None:
        """Every sentence of this step was reported; the surviving beams are the kept ones, sentence by sentence."""


class BeamTree:
    """A `BeamObserver` that keeps every candidate each step ranked as a record (a node of the search tree).

    `steps`: one list per step of dicts: sentence, step (its length), id, parent (the id of the live beam it
    extends, None at the first step), token, log_prob (raw score), score (log_prob / the GNMT penalty of its
    length), status ("kept": a live beam; "finished": EOS, offered; "max_len": offered unfinished at the max
    length; "stopped": would be live, but no live beam can beat the sentence's best any more; "pruned"), and best
    (True for one record per sentence: the hypothesis returned; following `parent` from it gives its tokens).
    Impossible candidates (score -inf: extensions of a dead beam, or of probability 0) are left out.
    """

    def __init__(self) -> None:
        self.steps: list[list[dict]] = []

    def begin(self, beam: int, alpha: float) -> None:
        self.steps, self.beam, self.alpha = [], beam, alpha
        self.records = 0  # records so far: the next record's id
        self.rows: list[int | None] = []  # per batch row, the id of its live beam's record (None: the first step)
        self.next_rows: list[int | None] = []  # the same for the next step's batch, built sentence by sentence
        self.best: dict[int, dict] = {}  # per sentence, the record of its best hypothesis so far
        self.step: list[dict] = []
        self.statuses: dict[int, str] = {}  # this sentence's offered candidates by rank
        self.winner: int | None = None  # rank of this sentence's last offer that became its best

    def offered(self, rank: int, status: str, better: bool) -> None:
        self.statuses[rank] = status
        if better:
            self.winner = rank

    def ranked(self, sentence: int, length: int, candidates: Candidates, kept: Sequence[int], live: bool) -> None:
        for rank in kept:
            self.statuses.setdefault(rank, "kept" if live else "stopped")
        penalty = gnmt_penalty(length, self.alpha)
        records = []
        for rank, (score, row, token) in enumerate(candidates):
            if score > NEG_INF:
                records.append({"sentence": sentence, "step": length, "id": self.records + len(records),
                                "parent": self.rows[row] if self.rows else None, "token": token, "log_prob": score,
                                "score": score / penalty, "status": self.statuses.get(rank, "pruned"),
                                "best": rank == self.winner})
                if rank == self.winner:
                    if sentence in self.best:
                        self.best[sentence]["best"] = False
                    self.best[sentence] = records[-1]
        self.records += len(records)
        self.step += records
        if live:  # the next batch holds this sentence's kept beams, then dead rows padding it to `beam`
            self.next_rows += [r["id"] for r in records if r["status"] == "kept"] + [None] * (self.beam - len(kept))
        self.statuses, self.winner = {}, None

    def step_done(self) -> None:
        self.steps.append(self.step)
        self.rows, self.next_rows, self.step = self.next_rows, [], []

    def nodes(self) -> list[dict]:
        """Every record, step after step."""
        return [record for step in self.steps for record in step]
