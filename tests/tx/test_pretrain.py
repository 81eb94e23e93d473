"""Masked-language-model pretraining (`python -m tx train pretrain`), fine-tuning the classifier from it,
and temperature calibration (fitting, ECE, the shipped form, PyTorch = onnxruntime)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from train_fixtures import make_sentiment_data, sentiment_rows, write_rows

from tx.calibration import expected_calibration_error, fit_temperature, nll, reliability, softmax
from tx.checkpoint import load_model_dir, read_model_config
from tx.config import MaskedLMConfig
from tx.model import MaskedLanguageModel
from tx.tasks import PretrainConfig, PretrainTask, SentimentConfig, SentimentTask
from tx.tokenizer import MASK
from tx.tools import train as tx_train

pytestmark = pytest.mark.exports

PRETRAIN_TEXTS = [f"the {a} {thing} was {b} and the {c} was {d}" for a, b, c, d, thing in zip(
    ["old", "new", "long", "short", "odd"] * 12, ["fun", "slow", "warm", "dull", "sharp", "bland"] * 10,
    ["cast", "plot", "score", "script"] * 15, ["good", "bad", "fine"] * 20, ["film", "movie", "story"] * 20,
    strict=True)]
TINY = ["model.d_model=16", "model.n_heads=2", "model.n_layers=2", "model.d_ff=32", "model.max_len=32",
        "model.vocab_size=120", "batch_tokens=120", "warmup_steps=2", "threads=1", "log_every=1", "eval_every=2",
        "mix="]


@pytest.fixture(scope="module")
def pretrain_data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pretrain")
    write_rows(folder / "train.tsv", ["text", "source"], [[t, "rt_reviews"] for t in PRETRAIN_TEXTS[:50]])
    write_rows(folder / "valid.tsv", ["text", "source"], [[t, "rt_reviews"] for t in PRETRAIN_TEXTS[50:]])
    return folder


@pytest.fixture(scope="module")
def pretrained(pretrain_data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "pretrain"
    args = ["pretrain", *(x for s in [*TINY, f"data_dir={pretrain_data}", f"out_dir={out}", "max_steps=4"]
                          for x in ("--set", s))]
    assert tx_train.main(args) == 0
    return out


def tiny_task(pretrain_data: Path, **kw) -> PretrainTask:
    model = MaskedLMConfig(vocab_size=120, d_model=16, n_heads=2, n_layers=1, d_ff=32, max_len=32)
    config = PretrainConfig(data_dir=str(pretrain_data), out_dir="unused", batch_tokens=4000, mix="", model=model, **kw)
    return PretrainTask(config, quiet=True)


# --- masking and the loss ------------------------------------------------------------------------------------------
def test_masking_rate_split_and_pads(pretrain_data):
    task = tiny_task(pretrain_data, mask_prob=0.15)
    torch.manual_seed(0)
    ids = torch.randint(task.first_normal_id, task.tokenizer.vocab_size, (400, 60))
    ids[:, 50:] = task.tokenizer.pad_id  # 10 pads per row
    corrupted, selected = task.mask(ids)
    real = ids != task.tokenizer.pad_id
    assert not (selected & ~real).any(), "a pad was selected"
    assert torch.equal(corrupted[~real], ids[~real]) and torch.equal(corrupted[~selected], ids[~selected])
    rate = selected.sum().item() / real.sum().item()
    assert 0.14 < rate < 0.16, rate  # 20,000 real tokens: 15% ± 1 point is > 10 standard deviations
    n = selected.sum().item()
    masked = (corrupted[selected] == task.mask_id).float().mean().item()
    kept = (corrupted[selected] == ids[selected]).float().mean().item()
    assert 0.77 < masked < 0.83 and 0.08 < kept < 0.125, (masked, kept, n)  # 80% <mask>; 10% kept (+ chance hits)
    replaced = corrupted[selected & (corrupted != task.mask_id) & (corrupted != ids)]
    assert (replaced >= task.first_normal_id).all(), "a random replacement was a special token"


def test_every_row_gets_at_least_one_masked_token(pretrain_data):
    task = tiny_task(pretrain_data, mask_prob=0.01)
    ids = torch.full((50, 3), 20)
    ids[:, 2] = task.tokenizer.pad_id
    _, selected = task.mask(ids)
    assert selected.any(dim=1).all() and not selected[:, 2].any()


def test_loss_is_cross_entropy_at_the_masked_positions_only(pretrain_data, monkeypatch):
    task = tiny_task(pretrain_data)
    torch.manual_seed(0)
    model = task.build_model().eval()
    ids = task.batches[0]["input_ids"]
    corrupted, selected = task.mask(ids)
    monkeypatch.setattr(task, "mask", lambda _ids, generator=None: (corrupted, selected))
    loss, count = task.loss(model, {"input_ids": ids})
    full = model(corrupted)  # (B, S, V) at every position
    assert torch.allclose(model(corrupted, selected), full[selected], atol=1e-5)
    expected = F.cross_entropy(full[selected], ids[selected], reduction="sum")
    assert count == int(selected.sum()) and torch.allclose(loss, expected, rtol=1e-5)
    # the unselected targets do not matter: change them all, the loss stays
    other = torch.where(selected, ids, (ids + 1) % task.tokenizer.vocab_size)
    assert torch.allclose(task.loss(model, {"input_ids": other})[0], loss)


def test_output_layer_is_tied_to_the_embeddings():
    model = MaskedLanguageModel(MaskedLMConfig(vocab_size=50, d_model=8, n_heads=2, n_layers=1, d_ff=16, max_len=16))
    with torch.no_grad():
        model.embed.table.weight[7] += 1.0  # a change to the embedding moves the logits of token 7 too
    before = model(torch.tensor([[5, 6]]))[0, 0, 7].item()
    with torch.no_grad():
        model.embed.table.weight[7] *= 2.0
    assert model(torch.tensor([[5, 6]]))[0, 0, 7].item() != before
    assert sum(p.numel() for p in model.parameters()) < 50 * 8 * 2 + 5000  # one (V, D) matrix, not two


# --- the CLI run, resume, fine-tuning from it ----------------------------------------------------------------------
def test_pretrain_run_writes_a_masked_lm_with_a_mask_token(pretrained):
    saved = read_model_config(pretrained / "model")
    assert saved["kind"] == "mlm" and saved["meta"]["task"] == "pretrain"
    tokenizer_json = json.loads((pretrained / "model" / "tokenizer.json").read_text(encoding="utf-8"))
    assert MASK in tokenizer_json["model"]["vocab"]
    metrics = (pretrained / "metrics.csv").read_text().splitlines()
    assert "valid_mlm_accuracy" in metrics[0] and len(metrics) == 3  # evaluations at steps 2 and 4


def test_pretrain_resume_equals_a_straight_run(pretrain_data, tmp_path):
    def run(out: Path, steps: int) -> None:
        sets = [*TINY, f"data_dir={pretrain_data}", f"out_dir={out}", f"max_steps={steps}", "model.dropout=0.3"]
        assert tx_train.main(["pretrain", *(x for s in sets for x in ("--set", s))]) == 0

    run(tmp_path / "straight", 6)
    run(tmp_path / "split", 2)
    assert tx_train.main(["pretrain", "--resume", "--set", f"out_dir={tmp_path / 'split'}",
                          "--set", "max_steps=6"]) == 0
    a = torch.load(tmp_path / "straight" / "last.pt", weights_only=True)["model"]
    b = torch.load(tmp_path / "split" / "last.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)  # the masks are drawn from the restored RNG state


def test_sentiment_init_from_a_pretrained_masked_lm(pretrained, tmp_path):
    data = make_sentiment_data(tmp_path)
    source = load_model_dir(pretrained / "model", "mlm")
    config = SentimentConfig(data_dir=str(data), out_dir=str(tmp_path / "run"), init_from=str(pretrained / "model"),
                             model={"n_layers": 1, "dropout": 0.0})
    task = SentimentTask(config, quiet=True)
    model = task.build_model()
    assert task.tokenizer.to_str() == (pretrained / "model" / "tokenizer.json").read_text(encoding="utf-8")
    assert model.config.d_model == 16 and model.config.n_layers == 1  # shape from the source, first layer only
    assert torch.equal(model.embed.table.weight, source.embed.table.weight)
    for name, tensor in model.encoder.layers[0].state_dict().items():
        assert torch.equal(tensor, source.encoder.layers[0].state_dict()[name]), name


def test_init_from_a_classifier_is_a_clear_error(tmp_path):
    from export_fixtures import build_sentiment_dir

    data = make_sentiment_data(tmp_path)
    model_dir = build_sentiment_dir(tmp_path / "clf")
    with pytest.raises(ValueError, match="expected a pretrained masked LM"):
        SentimentTask(SentimentConfig(data_dir=str(data), init_from=str(model_dir)), quiet=True)


# --- calibration ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("planted", [0.5, 1.0, 2.5])
def test_temperature_fitting_recovers_a_planted_temperature(planted):
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 3, (20000, 3))
    labels = np.array([rng.choice(3, p=p) for p in softmax(logits / planted)])
    fitted = fit_temperature(logits, labels)
    assert abs(fitted - planted) / planted < 0.05, fitted
    assert nll(logits, labels, fitted) <= min(nll(logits, labels, planted * f) for f in (0.9, 1.1))


def test_ece_by_hand():
    probs = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.4, 0.6]])
    labels = np.array([0, 1, 1, 1])
    # bins: 0.9 -> (0.8, 0.9], 0.8 -> (0.7, 0.8], 0.7 -> (0.6, 0.7], 0.6 -> (0.5, 0.6]; each bin holds one
    expected = (abs(1 - 0.9) + abs(0 - 0.8) + abs(1 - 0.7) + abs(1 - 0.6)) / 4 * 100
    assert expected_calibration_error(probs, labels) == pytest.approx(expected)
    table = reliability(probs, labels)
    assert sum(table.counts) == 4 and table.counts[8] == 1 and np.isnan(table.accuracy[0])


def test_trained_classifier_ships_with_its_temperature_and_labels_unchanged(tmp_path):
    from tx.inference import SentimentAnalyzer

    data = make_sentiment_data(tmp_path)
    sets = ["model.d_model=16", "model.n_heads=2", "model.n_layers=1", "model.d_ff=32", "model.max_len=32",
            "model.vocab_size=120", "batch_tokens=120", "warmup_steps=2", "threads=1", f"data_dir={data}",
            f"out_dir={tmp_path / 'run'}", "max_steps=12", "eval_every=6", "lr=0.01"]
    assert tx_train.main(["sentiment", *(x for s in sets for x in ("--set", s))]) == 0
    model_dir = tmp_path / "run" / "model"
    temperature = read_model_config(model_dir)["config"]["temperature"]
    assert temperature != 1.0 and 0.05 < temperature < 20
    calibrated = SentimentAnalyzer.from_dir(model_dir)
    raw = SentimentAnalyzer.from_dir(model_dir)
    raw.model.config.temperature = 1.0
    texts = [text for _, text in sentiment_rows()]
    for a, b in zip(calibrated.classify(texts), raw.classify(texts), strict=True):
        assert a.label == b.label  # a positive divisor never changes the argmax
        z = np.log([b.probs["negative"], b.probs["positive"]])
        expected = softmax(z[None] / temperature)[0]
        assert a.probs["positive"] == pytest.approx(expected[1], abs=1e-6)


def test_onnx_gives_the_same_calibrated_probabilities_as_pytorch():
    from export_fixtures import REVIEWS, SENTIMENT_TEMPERATURE, exported

    from runtime import OnnxSentimentClassifier
    from tx.inference import SentimentAnalyzer

    model_dir = exported("sentiment")  # exported with temperature SENTIMENT_TEMPERATURE in its config
    assert read_model_config(model_dir)["config"]["temperature"] == SENTIMENT_TEMPERATURE != 1.0
    texts = [t for _, t in REVIEWS]
    torch_probs = [p.probs["positive"] for p in SentimentAnalyzer.from_dir(model_dir).classify(texts)]
    onnx_probs = [p.probs["positive"] for p in OnnxSentimentClassifier(model_dir).classify(texts)]
    assert np.allclose(torch_probs, onnx_probs, atol=1e-5)
    raw = SentimentAnalyzer.from_dir(model_dir)
    raw.model.config.temperature = 1.0
    raw_probs = np.array([[p.probs["negative"], p.probs["positive"]] for p in raw.classify(texts)])
    expected = softmax(np.log(raw_probs) / SENTIMENT_TEMPERATURE)[:, 1]
    assert np.allclose(onnx_probs, expected, atol=1e-5)  # the temperature is really in the graph
    assert not np.allclose(raw_probs[:, 1], onnx_probs, atol=1e-4)
