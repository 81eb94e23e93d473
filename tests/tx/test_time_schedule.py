"""The learning-rate schedule tied to the wall-clock budget (`decay_method="linear_time"`): linear warm-up over
`warmup_steps`, then a line that reaches `min_lr_ratio · lr` exactly when `max_time` runs out, so a run stopped by
its time budget (a GPU window) ends annealed instead of at a high, arbitrary learning rate. The clock is faked:
each check computes the expected learning rate by hand.
"""
from __future__ import annotations

import pytest
import torch
from torch import nn

from tx.trainer import TrainConfig, Trainer, time_linear_schedule


def test_warm_up_then_a_line_to_the_floor_at_the_end_of_the_budget():
    spent = [0.0]
    factor = time_linear_schedule(warmup=10, spent=lambda: spent[0], min_ratio=0.1)
    assert [factor(s) for s in (0, 4, 9)] == pytest.approx([0.1, 0.5, 1.0]), "linear warm-up, by steps"
    spent[0] = 0.5
    assert factor(1000) == pytest.approx(0.1 + 0.9 * 0.5)
    assert factor(2) == pytest.approx(0.3), "still warming up: the lower of the two"
    spent[0] = 1.0
    assert factor(1000) == pytest.approx(0.1), "the floor exactly when the budget is spent"
    spent[0] = 1.7
    assert factor(1000) == pytest.approx(0.1), "past the budget (the last step, the final evaluation): the floor"
    assert time_linear_schedule(1, lambda: 0.25)(50) == pytest.approx(0.75), "no floor: a line to 0"


class OneBatchTask:
    """The least a Trainer needs: one batch, a loss, an evaluation (never reached here)."""

    score_name = "score"

    def __init__(self):
        self.batches = [{"x_ids": torch.ones(2, 3)}]

    def loss(self, model, batch):
        return model(batch["x_ids"]).pow(2).sum(), 1

    def evaluate(self, model):
        return {"score": 0.0}

    def checkpoint_extra(self):
        return {}

    def save_model_dir(self, model, directory):
        pass


def make_trainer(tmp_path, **settings) -> Trainer:
    config = TrainConfig(out_dir=str(tmp_path / "run"), lr=1e-3, warmup_steps=2, amp="none", **settings)
    return Trainer(config, nn.Linear(3, 1), OneBatchTask(), quiet=True)


def test_the_trainer_decays_with_the_clock_and_a_resumed_run_continues_the_same_line(tmp_path, monkeypatch):
    trainer = make_trainer(tmp_path, decay_method="linear_time", max_time=100.0, min_lr_ratio=0.0)
    clock = [0.0]
    monkeypatch.setattr(trainer, "elapsed", lambda: clock[0])
    for _ in range(3):  # past the warm-up
        trainer.train_step(trainer.task.batches[0])
    clock[0] = 40.0
    trainer.train_step(trainer.task.batches[0])
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3 * 0.6), "40 of 100 s spent"
    # resumed after 40 s with the 60 s that were left: the same line, not a new one from the peak
    again = make_trainer(tmp_path, decay_method="linear_time", max_time=60.0, min_lr_ratio=0.0)
    again.wall_before, clock[0] = 40.0, 30.0
    monkeypatch.setattr(again, "elapsed", lambda: clock[0])
    again.scheduler.last_epoch = 10
    again.train_step(again.task.batches[0])
    assert again.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3 * 0.3), "70 of 100 s spent in all"


def test_the_paper_schedule_stays_the_default_and_a_time_decay_needs_a_budget(tmp_path):
    trainer = make_trainer(tmp_path, max_time=100.0)
    for _ in range(8):
        trainer.train_step(trainer.task.batches[0])
    assert trainer.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3 * (2 / 9) ** 0.5), "inverse-sqrt"
    with pytest.raises(ValueError, match="linear_time decays to the end of max_time"):
        make_trainer(tmp_path, decay_method="linear_time")
    with pytest.raises(ValueError, match="decay_method must be one of inverse_sqrt, linear_time"):
        make_trainer(tmp_path, decay_method="cosine")
