"""The committed models reproduce what their model cards say, from the committed files alone.

`samples.tsv` holds test rows with references and the outputs the model produced when it was
shipped (`python -m tx ship`); `metrics.json["samples"]` holds the scores of those rows. Both are
recomputed here with the PyTorch models, so a change to the model code, the decoding or the
tokenizer that alters what users see fails this test.
"""
import csv
import json
import subprocess
from pathlib import Path

import pytest
import sacrebleu

from tx.inference import SentimentAnalyzer, Translator

MODELS = Path(__file__).resolve().parent.parent / "models"
BUDGET_MB = 80  # the limit on committed model files
TRANSLATE_SAMPLES = 40  # rows re-translated per direction (beam 4 on 2 CPU cores: ~1 s a sentence)

pytestmark = pytest.mark.slow


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def committed_files(folder: Path) -> list[Path]:
    """What git tracks under `folder` (generated exports and conversions beside it are not shipped);
    every file, when this is not a git checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", "."], cwd=folder, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return [p for p in folder.rglob("*") if p.is_file()]
    return [folder / name for name in listed.stdout.decode().split("\0") if name]


def test_committed_models_fit_the_size_budget():
    files = committed_files(MODELS)
    assert any(p.name == "model.pt" for p in files), "no shipped model found under models/"
    total = sum(p.stat().st_size for p in files) / 2**20
    assert total <= BUDGET_MB, f"models/ holds {total:.1f} MiB of committed files (budget {BUDGET_MB})"


def test_every_shipped_model_has_its_card_files():
    for name in ("translate", "sentiment"):
        folder = MODELS / name
        for required in ("config.json", "model.pt", "tokenizer.json", "metrics.json", "metrics.csv", "samples.tsv",
                         "README.md"):
            assert (folder / required).is_file(), f"{folder / required} is missing"


def test_sentiment_model_reproduces_its_card():
    folder = MODELS / "sentiment"
    card = json.loads((folder / "metrics.json").read_text())
    samples = rows(folder / "samples.tsv")
    predictions = SentimentAnalyzer.from_dir(folder).classify([r["text"] for r in samples])
    same = sum(p.label == r["predicted"] for p, r in zip(predictions, samples, strict=True)) / len(samples)
    accuracy = 100.0 * sum(p.label == r["label"] for p, r in zip(predictions, samples, strict=True)) / len(samples)
    assert same >= 0.995, f"only {same:.1%} of the card's predicted labels reproduced"
    assert accuracy == pytest.approx(card["samples"]["accuracy"], abs=0.3)
    if card["samples"].get("reviews") == card["test"]["reviews"]:  # samples.tsv is the whole test split
        assert accuracy == pytest.approx(card["test"]["accuracy"], abs=0.3)


def test_sentiment_model_is_calibrated_as_its_card_says():
    """The committed temperature gives the card's test ECE (≤ 3%) and the probabilities in samples.tsv."""
    from tx.calibration import expected_calibration_error

    folder = MODELS / "sentiment"
    calibration = json.loads((folder / "calibration.json").read_text())
    config = json.loads((folder / "config.json").read_text())["config"]
    assert config["temperature"] == calibration["temperature"] > 1.0
    samples = rows(folder / "samples.tsv")
    predictions = SentimentAnalyzer.from_dir(folder).classify([r["text"] for r in samples])
    probs = [[p.probs["negative"], p.probs["positive"]] for p in predictions]
    ece = expected_calibration_error(probs, [["negative", "positive"].index(r["label"]) for r in samples])
    assert ece == pytest.approx(calibration["splits"]["test"]["calibrated"]["ece"], abs=0.05) and ece <= 3.0
    assert max(abs(p[1] - float(r["p_positive"])) for p, r in zip(probs, samples, strict=True)) < 2e-3


def test_translation_model_reproduces_its_card_outputs():
    folder = MODELS / "translate"
    samples = rows(folder / "samples.tsv")[:TRANSLATE_SAMPLES]
    translator = Translator.from_dir(folder)
    for src, tgt, column in (("de", "en", "output_en"), ("en", "de", "output_de")):
        outputs = translator.translate([r[src] for r in samples], src, tgt, method="beam", beam=4, length_penalty=0.6)
        same = sum(o.text == r[column] for o, r in zip(outputs, samples, strict=True)) / len(samples)
        assert same >= 0.95, f"{src}->{tgt}: only {same:.0%} of the card's outputs reproduced"
        ours = sacrebleu.corpus_bleu([o.text for o in outputs], [[r[tgt] for r in samples]]).score
        card = sacrebleu.corpus_bleu([r[column] for r in samples], [[r[tgt] for r in samples]]).score
        assert ours == pytest.approx(card, abs=0.3)


def test_translation_card_sample_scores_match_its_samples_file():
    """metrics.json's sample BLEU is what the committed outputs score (the card is not stale)."""
    folder = MODELS / "translate"
    card = json.loads((folder / "metrics.json").read_text())["samples"]
    samples = rows(folder / "samples.tsv")
    for direction, column, tgt in (("de-en", "output_en", "en"), ("en-de", "output_de", "de")):
        bleu = sacrebleu.corpus_bleu([r[column] for r in samples], [[r[tgt] for r in samples]]).score
        assert bleu == pytest.approx(card["directions"][direction]["bleu"], abs=0.01)
