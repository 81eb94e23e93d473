"""tx.confidence and `python -m tx confidence`: the low-confidence threshold is measured on hand-judged outputs,
and its rule holds."""
from __future__ import annotations

import json

import numpy as np
import pytest
from export_fixtures import GERMAN, exported, fresh_copy

from runtime.confidence import CONFIDENCE_FILE, read_threshold
from tx.confidence import auroc, choose_threshold
from tx.inference import Translator
from tx.tools.confidence import main


def test_auroc_by_hand():
    scores = np.array([0.9, 0.8, 0.3, 0.5, 0.5])
    right = np.array([True, True, False, False, True])
    # right scores 0.9, 0.8, 0.5 against wrong 0.3, 0.5: 3 + 2 + (1 + 0.5) = 5.5 of 6 pairs
    assert auroc(scores, right) == pytest.approx(5.5 / 6)
    assert np.isnan(auroc(scores, np.ones(5, dtype=bool)))


def test_threshold_is_the_highest_cut_with_few_right_below():
    scores = np.array([0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.6, 0.7, 0.8])
    right = np.array([False, False, False, False, False, True, False, True, True, True])
    # below 0.35: 5 outputs, none right; below 0.4: 1 of 6 right (16.7%) > 10%; below 0.6: 1 of 7 (14.3%)
    assert choose_threshold(scores, right, 0.10) == pytest.approx(0.35)
    assert choose_threshold(scores, right, 0.20) == pytest.approx(0.6)
    assert choose_threshold(scores, np.ones(10, dtype=bool), 0.10) == 0.0  # nothing to mark


def test_cli_measures_the_models_own_judged_outputs_and_skips_changed_ones():
    model_dir = fresh_copy("translate", "confidence")
    outputs = Translator.from_dir(exported("translate")).translate(GERMAN, "de", "en", method="beam")
    rows = ["direction\tsource\thypothesis\tcorrect\tnote"]
    for i, (text, out) in enumerate(zip(GERMAN, outputs, strict=True)):
        hypothesis = out.text if i else "a text the model did not write"
        rows.append(f"de-en\t{text}\t{hypothesis}\t{'yes' if i % 2 else 'no'}\t")
    (model_dir / "everyday_judged.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main([str(model_dir)]) == 0
    result = json.loads((model_dir / CONFIDENCE_FILE).read_text(encoding="utf-8"))
    assert result["skipped_changed_outputs"] == 1
    assert result["all"]["outputs"] == len(GERMAN) - 1
    assert sum(b["outputs"] for b in result["bins"]) == len(GERMAN) - 1
    assert read_threshold(model_dir) == result["threshold"]
    assert read_threshold(model_dir / "missing") is None


def test_cli_says_when_there_is_nothing_judged(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert "everyday_judged.tsv" in capsys.readouterr().err
