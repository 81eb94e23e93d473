"""Fixtures of the GPU job's tests: a tiny translation model directory, as a run writes one, to shard and unpack."""
from __future__ import annotations

from pathlib import Path

import pytest

from tx.checkpoint import save_model_dir


@pytest.fixture
def model_dir(tmp_path) -> Path:
    from conftest import tiny_seq2seq

    from tx.tokenizer import train_tokenizer

    tokenizer = train_tokenizer(["der Hund", "the dog"] * 3, vocab_size=40)
    folder = tmp_path / "model"
    save_model_dir(folder, tiny_seq2seq(vocab_size=tokenizer.vocab_size), tokenizer.to_str(), {"task": "translate"})
    (folder / "metrics.csv").write_text("step,mean_bleu\n2,1.0\n")
    return folder
