"""Training and evaluation CLIs on tiny fixtures: smoke runs, exact resume, settings checks, budgets,
torchrun/DDP, evaluation outputs, and the length-bucketed batching.

Fixtures are written into tmp_path in the processed layout (`python -m corpus prepare`):
translate/{train,valid,test}.tsv with header de/en/kind, sentiment/{train,valid,test}.tsv with
label/text and sentiment/all.tsv with an extra fold column. Models are tiny (d_model 16) so a run
takes about a second on one CPU core.
"""
from __future__ import annotations

import csv
import json
import math
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest
import torch
from train_fixtures import make_sentiment_data, make_translate_data

from runtime.tsv import read_tsv
from tx.batching import token_batches
from tx.checkpoint import load_checkpoint
from tx.evaluation import classification_scores
from tx.inference import SentimentAnalyzer, Translator
from tx.run_setup import make_config
from tx.tools import evaluate as tx_evaluate
from tx.tools import train as tx_train
from tx.trainer import Trainer

REPO = Path(__file__).resolve().parents[2]

# --- fixtures -------------------------------------------------------------------------------------------------------
# Tiny models; a small token budget so an epoch has several batches.
SHAPE = ["model.d_model=16", "model.n_heads=2", "model.n_layers=1", "model.d_ff=32", "model.max_len=32",
         "model.vocab_size=120"]
TINY = {"translate": [*SHAPE, "model.n_decoder_layers=1", "max_src_len=24", "batch_tokens=160", "eval_sentences=4",
                      "warmup_steps=2", "average_last=0", "threads=1", "log_every=1"],
        "sentiment": [*SHAPE, "batch_tokens=120", "warmup_steps=2", "patience=0", "threads=1", "log_every=1"]}


def train_args(task: str, data: Path, out: Path, *extra: str) -> list[str]:
    sets = [*TINY[task], f"data_dir={data}", f"out_dir={out}", *extra]
    return [task, *(x for s in sets for x in ("--set", s))]


def run_train(task: str, data: Path, out: Path, *extra: str) -> None:
    assert tx_train.main(train_args(task, data, out, *extra)) == 0


def read_metrics(out: Path) -> list[dict[str, str]]:
    with open(out / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    make_translate_data(root)
    make_sentiment_data(root)
    return root


@pytest.fixture(scope="module")
def trained(data_root, tmp_path_factory) -> dict[str, Path]:
    """One 2-step run per task, shared by the smoke and evaluation tests."""
    runs = tmp_path_factory.mktemp("runs")
    for task in ("translate", "sentiment"):
        run_train(task, data_root / task, runs / task, "max_steps=2", "eval_every=1")
    return {task: runs / task for task in ("translate", "sentiment")}


# --- smoke runs -----------------------------------------------------------------------------------------------------
def test_translate_smoke_run_writes_a_loadable_model(trained):
    out = trained["translate"]
    for name in ("last.pt", "best.pt", "metrics.csv", "model/config.json", "model/model.pt",
                 "model/tokenizer.json", "model/metrics.csv"):
        assert (out / name).is_file(), name
    ckpt = load_checkpoint(out / "last.pt", "seq2seq")
    assert ckpt["step"] == 2 and ckpt["config"]["d_model"] == 16
    assert {"optimizer", "scheduler", "rng", "tokenizer", "train_config"} <= ckpt.keys()
    rows = read_metrics(out)
    assert [int(r["step"]) for r in rows] == [1, 2]
    assert all(math.isfinite(float(r[k])) for r in rows for k in ("train_loss", "valid_loss", "valid_bleu"))
    translator = Translator.from_dir(out / "model")
    assert sorted(translator.directions) == [("de", "en"), ("en", "de")]
    [result] = translator.translate(["Der Hund ist groß."], "de", "en", method="greedy")
    assert isinstance(result.text, str)


def test_sentiment_smoke_run_writes_a_loadable_model(trained):
    out = trained["sentiment"]
    for name in ("last.pt", "best.pt", "metrics.csv", "model/config.json", "model/model.pt", "model/tokenizer.json"):
        assert (out / name).is_file(), name
    assert load_checkpoint(out / "last.pt", "classifier")["step"] == 2
    rows = read_metrics(out)
    assert [int(r["step"]) for r in rows] == [1, 2]
    assert all(0.0 <= float(r["valid_accuracy"]) <= 100.0 for r in rows)
    [pred] = SentimentAnalyzer.from_dir(out / "model").classify(["a wonderful and funny film"])
    assert pred.label in ("negative", "positive")
    assert sum(pred.probs.values()) == pytest.approx(1.0, abs=1e-5)


# --- exact resume ---------------------------------------------------------------------------------------------------
def assert_same_state(a: dict, b: dict, what: str) -> None:
    assert a.keys() == b.keys(), what
    for k in a:
        assert torch.equal(a[k], b[k]), f"{what}: {k} differs"


@pytest.mark.parametrize("task", ["translate", "sentiment"])
def test_resume_gives_the_same_weights_as_a_straight_run(task, data_root, tmp_path, monkeypatch):
    """8 steps straight == 4 steps, then --resume to 8: identical weights and optimizer moments.

    Dropout is on (so the restored RNG state matters); with several batches per epoch the split at
    step 4 falls inside an epoch, and the run crosses an epoch boundary (batch order per epoch).
    The resumed run reads last.pt once (settings, tokenizer, model and training state all come from that read)."""
    data = data_root / task
    common = ("model.dropout=0.3", "eval_every=4", "lr=0.003")
    run_train(task, data, tmp_path / "straight", "max_steps=8", *common)
    run_train(task, data, tmp_path / "split", "max_steps=4", *common)
    first_half = load_checkpoint(tmp_path / "split" / "last.pt")
    assert first_half["step"] == 4 and first_half["batch_in_epoch"] > 0  # stopped mid-epoch
    loaded, torch_load = [], torch.load

    def load(path, *args, **kwargs):
        loaded.append(Path(path).name)
        return torch_load(path, *args, **kwargs)

    monkeypatch.setattr(torch, "load", load)
    assert tx_train.main([task, "--resume", "--set", f"out_dir={tmp_path / 'split'}", "--set", "max_steps=8"]) == 0
    monkeypatch.undo()
    assert loaded.count("last.pt") == 1
    straight = load_checkpoint(tmp_path / "straight" / "last.pt")
    resumed = load_checkpoint(tmp_path / "split" / "last.pt")
    assert straight["step"] == resumed["step"] == 8
    assert straight["epoch"] >= 1, "the fixture should span more than one epoch"
    assert (straight["epoch"], straight["batch_in_epoch"]) == (resumed["epoch"], resumed["batch_in_epoch"])
    assert_same_state(straight["model"], resumed["model"], "model")
    for sa, sb in zip(straight["optimizer"]["state"].values(), resumed["optimizer"]["state"].values(), strict=True):
        assert_same_state(sa, sb, "optimizer")
    assert straight["scheduler"]["last_epoch"] == resumed["scheduler"]["last_epoch"] == 8
    assert torch.equal(straight["rng"]["torch"], resumed["rng"]["torch"])
    # the resumed run's metrics.csv continues the first half's rows
    assert [int(r["step"]) for r in read_metrics(tmp_path / "split")] == [4, 8]
    # the second half did change the weights, so the equality above is not vacuous
    assert any(not torch.equal(straight["model"][k], first_half["model"][k]) for k in first_half["model"])


# --- settings: --set and --config -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("setting", "message"), [
    ("bogus=1", "unknown setting 'bogus'"),
    ("model.bogus=1", "unknown setting 'model.bogus'"),
    ("d_model=64", "unknown setting 'd_model' (did you mean model.d_model?)"),
    ("model.d_model=abc", "model.d_model is int: 'abc' is not a number"),
    ("model.d_model=1.5", "model.d_model is int"),
    ("model.n_heads=3", "d_model=256 is not divisible by n_heads=3"),
    ("lr=fast", "lr is float"),
    ("use_phrases=maybe", "use_phrases is a bool"),
    ("model.pre_norm=maybe", "model.pre_norm is a bool"),
    ("model.d_model", "--set takes key=value"),
])
def test_bad_set_is_a_clear_error_with_exit_code_2(setting, message, tmp_path, capsys):
    # data_dir points nowhere: were the setting wrongly accepted, the run fails fast instead of training
    assert tx_train.main(["translate", "--set", f"out_dir={tmp_path}", "--set", f"data_dir={tmp_path / 'none'}",
                          "--set", setting]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert not any(tmp_path.iterdir()), "a rejected command line must not start a run"


def test_set_parses_each_type():
    config, _ = make_config("translate", None, ["use_phrases=false", "model.pre_norm=YES", "model.d_model=64",
                                                         "warmup_steps=1e3", "lr=2e-4", "out_dir=runs/x"])
    assert (config.use_phrases, config.model.pre_norm) == (False, True)
    assert (config.model.d_model, config.warmup_steps, config.lr, config.out_dir) == (64, 1000, 2e-4, "runs/x")
    assert type(config.model.d_model) is int and type(config.warmup_steps) is int and type(config.lr) is float
    assert make_config("sentiment", None, ["max_time=90"])[0].max_time == 90.0
    none, _ = make_config("translate", None, ["model.n_decoder_layers=none", "model.n_layers=2"])
    assert (none.model.n_layers, none.model.n_decoder_layers) == (2, 2)  # None: as many as the encoder's


def test_model_settings_keep_the_runs_defaults_and_derived_fields_follow():
    """The run's model defaults (vocab 10k, 3 decoder layers) stay under a partial setting; the target vocabulary,
    derived from vocab_size, follows a new vocab_size; the run config rebuilds from its asdict (checkpoints)."""
    config, _ = make_config("translate", None, ["model.vocab_size=16000", "model.n_layers=6"])
    assert (config.model.vocab_size, config.model.tgt_vocab_size) == (16000, 16000)
    assert (config.model.n_layers, config.model.n_decoder_layers, config.model.d_model) == (6, 3, 256)
    assert type(config).__name__ == "TranslateConfig" and type(config)(**asdict(config)) == config
    assert make_config("translate", None, [])[0].model.vocab_size == 10000
    assert make_config("sentiment", None, [])[0].model.dropout == 0.3


def test_list_prints_every_setting_with_its_default(capsys):
    assert tx_train.main(["sentiment", "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "lr = 0.0005" in out and "model.d_model = 128" in out and "model.pooling = 'mean'" in out


@pytest.mark.parametrize(("values", "message"), [
    ({"model": {"d_model": "big"}}, "model.d_model must be int"),
    ({"model": {"d_model": 256.0}}, "model.d_model must be int"),
    ({"model": {"d_model": True}}, "model.d_model must be int"),
    ({"model": {"n_decoder_layers": "2"}}, "model.n_decoder_layers must be int or None"),
    ({"model": {"nope": 1}}, "unknown settings ['model.nope']"),
    ({"model": 512}, "model must be an object of settings"),
    ({"d_model": 512}, "unknown settings ['d_model'] (did you mean model.d_model?)"),
    ({"use_phrases": 1}, "use_phrases must be bool"),
    ({"lr": "0.001"}, "lr must be float"),
    ({"nope": 3}, "unknown settings ['nope']"),
])
def test_config_file_with_a_wrong_type_exits_2(values, message, tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"out_dir": str(tmp_path / "run"), "data_dir": str(tmp_path / "none"), **values}))
    assert tx_train.main(["translate", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and str(path) in err
    assert not (tmp_path / "run").exists()


def test_config_file_then_set_on_top(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model": {"d_model": 64, "dropout": 0, "n_decoder_layers": None}, "lr": 1,
                                "use_phrases": False}))
    config, _ = make_config("translate", path, ["model.d_model=32"])
    assert (config.model.d_model, config.model.dropout, config.lr, config.use_phrases) == (32, 0.0, 1.0, False)
    assert config.model.n_decoder_layers == config.model.n_layers == 3
    path.write_text("{not json")
    assert tx_train.main(["translate", "--config", str(path)]) == 2
    assert "cannot read the config file" in capsys.readouterr().err


@pytest.mark.parametrize("path", sorted((REPO / "configs").glob("*.json")), ids=lambda p: p.name)
def test_planned_configs_are_valid_settings(path):
    config, _ = make_config("translate", path, [])
    assert config.model.d_model == 512 and config.model.tgt_vocab_size == config.model.vocab_size == 16000


def test_resume_without_a_checkpoint_exits_2(tmp_path, capsys):
    assert tx_train.main(["sentiment", "--resume", "--set", f"out_dir={tmp_path}"]) == 2
    assert "last.pt" in capsys.readouterr().err


# --- the one entry: python -m tx TOOL -------------------------------------------------------------------------------
DOCS = ["README.md", "configs/README.md", "tx/evalsets/README.md", "models/translate/README.md",
        "models/sentiment/README.md"]


def test_python_m_tx_lists_the_tools_and_refuses_others(capsys):
    from tx.__main__ import main
    from tx.tools import TOOLS

    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {name}" in listed for name in TOOLS)
    assert main(["nope"]) == 2 and "unknown tool 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("doc", DOCS)
def test_documented_commands_name_real_tools(doc):
    import re

    from tx.tools import TOOLS

    text = (REPO / doc).read_text(encoding="utf-8")
    assert not re.findall(r"-m tx\.(?:train|evaluate|ship|calibration|confidence|bench_decode|bench_train)\b", text)
    assert set(re.findall(r"-m tx (\w+)", text)) - {"TOOL"} <= set(TOOLS)


# --- budgets --------------------------------------------------------------------------------------------------------
def test_max_time_stops_cleanly_with_a_checkpoint(data_root, tmp_path):
    """No evaluation is due before the budget runs out, so the one checkpoint is the one the stop writes."""
    out = tmp_path / "run"
    run_train("sentiment", data_root / "sentiment", out, "max_time=0.5", "max_epochs=100000", "eval_every=100000",
              "log_every=1000")
    ckpt = load_checkpoint(out / "last.pt")
    rows = read_metrics(out)
    assert 0 < ckpt["step"] < 100000, "stopped by the time budget, not by max_epochs or eval_every"
    assert [int(r["step"]) for r in rows] == [ckpt["step"]], "the stretch before the stop is evaluated and saved"
    assert 0.5 <= ckpt["wall_time"] < 30 and float(rows[-1]["wall_time"]) >= 0.5
    assert ckpt["batch_in_epoch"] > 0 or ckpt["epoch"] > 0
    assert (out / "best.pt").is_file() and (out / "model" / "model.pt").is_file()
    # the stopped run resumes: one more step from where it stopped
    assert tx_train.main(["sentiment", "--resume", "--set", f"out_dir={out}", "--set", "max_time=0",
                          "--set", f"max_steps={ckpt['step'] + 1}"]) == 0
    assert load_checkpoint(out / "last.pt")["step"] == ckpt["step"] + 1


def test_ctrl_c_saves_before_exit(data_root, tmp_path, monkeypatch):
    """SIGINT during training (raised from inside step 3, after the trainer's handler is installed)."""
    before = signal.getsignal(signal.SIGINT)  # not always default_int_handler: a background job ignores SIGINT
    original = Trainer.train_step

    def step_then_interrupt(self, batch):
        result = original(self, batch)
        if self.step == 3:
            signal.raise_signal(signal.SIGINT)
        return result

    monkeypatch.setattr(Trainer, "train_step", step_then_interrupt)
    out = tmp_path / "run"
    run_train("sentiment", data_root / "sentiment", out, "eval_every=100000", "max_epochs=1000")
    assert load_checkpoint(out / "last.pt")["step"] == 3
    assert signal.getsignal(signal.SIGINT) is before, "the previous handler is restored"


def test_patience_stops_after_evaluations_without_improvement(data_root, tmp_path):
    out = tmp_path / "run"
    # lr 0: the weights never change, so the score never improves after the first evaluation
    run_train("sentiment", data_root / "sentiment", out, "lr=0", "eval_every=1", "patience=2", "max_epochs=1000")
    ckpt = load_checkpoint(out / "last.pt")
    assert ckpt["step"] == 3 and ckpt["best_step"] == 1 and ckpt["evals_since_best"] == 2
    assert [int(r["step"]) for r in read_metrics(out)] == [1, 2, 3]


# --- several processes ----------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["translate", "sentiment"])
def test_torchrun_two_processes_gloo(task, data_root, tmp_path):
    out = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr=127.0.0.1",
           f"--master_port={free_port()}", "-m", "tx", "train",
           *train_args(task, data_root / task, out, "max_steps=3", "eval_every=2")]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "(2 processes)" in proc.stdout
    assert load_checkpoint(out / "last.pt")["step"] == 3
    assert [int(r["step"]) for r in read_metrics(out)] == [2, 3], "rank 0 alone writes metrics"
    loader = Translator if task == "translate" else SentimentAnalyzer
    assert loader.from_dir(out / "model") is not None


@pytest.mark.slow  # a Python that imports torch: ~3 s of CPU
def test_exit_worker_runs_the_atexit_handlers_flushes_and_exits_with_the_code():
    """A torchrun worker leaves through exit_worker, skipping the interpreter's teardown (tx.trainer says why)."""
    script = ("import atexit; from tx.trainer import exit_worker; atexit.register(print, 'atexit ran'); "
              "print('unflushed', end=''); exit_worker(3); print('never')")
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # so a missing flush loses text
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=buffered, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 3 and proc.stdout == "unflushedatexit ran\n", proc.stdout + proc.stderr


# --- evaluation -----------------------------------------------------------------------------------------------------
def test_evaluate_translation_writes_scores_per_direction(trained, data_root, tmp_path):
    out = tmp_path / "eval"
    assert tx_evaluate.main(["translate", "--model", str(trained["translate"] / "model"), "--data-dir",
                             str(data_root / "translate"), "--method", "greedy", "--out", str(out)]) == 0
    scores = json.loads((out / "eval.json").read_text())
    assert scores["task"] == "translate" and scores["split"] == "test" and scores["sentences"] == 6
    assert set(scores["directions"]) == {"de-en", "en-de"}
    for d in scores["directions"].values():
        assert 0.0 <= d["bleu"] <= 100.0 and 0.0 <= d["chrf"] <= 100.0
        assert d["bleu_signature"].startswith("nrefs:1|") and "tok:13a" in d["bleu_signature"]
        assert d["chrf_signature"].startswith("nrefs:1|")
    with open(out / "test_outputs.tsv", newline="", encoding="utf-8") as f:
        samples = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert len(samples) == 2 * 6 and {s["direction"] for s in samples} == {"de-en", "en-de"}


def test_evaluate_translation_beam_and_limit(trained, data_root, tmp_path):
    out = tmp_path / "eval"
    assert tx_evaluate.main(["translate", "--model", str(trained["translate"] / "model"), "--data-dir",
                             str(data_root / "translate"), "--split", "valid", "--limit", "2", "--beam", "2",
                             "--out", str(out)]) == 0
    scores = json.loads((out / "eval_valid.json").read_text())  # eval.json is the test split's (`tx ship` reads it)
    assert (scores["split"], scores["sentences"], scores["method"], scores["beam"]) == ("valid", 2, "beam", 2)
    assert not (out / "eval.json").exists()
    assert tx_evaluate.main(["translate", "--model", str(trained["translate"] / "model"), "--split", "everyday",
                             "--limit", "3", "--method", "greedy", "--out", str(out)]) == 0
    everyday = read_tsv(out / "everyday_outputs.tsv")
    assert json.loads((out / "eval_everyday.json").read_text())["sentences"] == 3 and len(everyday) == 6
    assert everyday[0]["source"] == "Wo ist der Bahnhof?"  # the hand-written set, whatever --data-dir says


def test_evaluate_sentiment_writes_accuracy_f1_confusion(trained, data_root, tmp_path):
    out = tmp_path / "eval"
    assert tx_evaluate.main(["sentiment", "--model", str(trained["sentiment"] / "model"), "--data-dir",
                             str(data_root / "sentiment"), "--out", str(out)]) == 0
    scores = json.loads((out / "eval.json").read_text())
    confusion = scores["confusion"]["rows_gold_cols_predicted"]
    assert scores["confusion"]["labels"] == ["negative", "positive"]
    assert sum(map(sum, confusion)) == scores["reviews"] == 8
    assert scores["accuracy"] == pytest.approx(100.0 * (confusion[0][0] + confusion[1][1]) / 8, abs=0.01)
    assert 0.0 <= scores["macro_f1"] <= 100.0


def test_classification_scores_by_hand():
    gold = ["positive", "positive", "negative", "negative", "negative"]
    pred = ["positive", "negative", "negative", "negative", "positive"]
    s = classification_scores(gold, pred)
    assert s["confusion"]["rows_gold_cols_predicted"] == [[2, 1], [1, 1]]
    assert s["accuracy"] == 60.0
    assert s["macro_f1"] == pytest.approx(100 * (2 * 2 / (4 + 1 + 1) + 2 * 1 / (2 + 1 + 1)) / 2, abs=0.01)


def test_evaluate_missing_model_exits_2(data_root, tmp_path, capsys):
    assert tx_evaluate.main(["sentiment", "--model", str(tmp_path / "nothing"), "--data-dir",
                             str(data_root / "sentiment"), "--out", str(tmp_path / "o")]) == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.slow
def test_evaluate_cross_validation_reports_mean_and_std(data_root, tmp_path):
    out = tmp_path / "cv"
    sets = [*TINY["sentiment"], f"out_dir={tmp_path / 'runs'}", "max_epochs=2"]
    assert tx_evaluate.main(["sentiment", "--cv", "3", "--data-dir", str(data_root / "sentiment"), "--out", str(out),
                             *(x for s in sets for x in ("--set", s))]) == 0
    result = json.loads((out / "cv3.json").read_text())
    assert result["folds"] == 3 and len(result["accuracies"]) == 3
    assert result["mean"] == pytest.approx(statistics.mean(result["accuracies"]), abs=0.01)
    assert result["std"] == pytest.approx(statistics.stdev(result["accuracies"]), abs=0.01)
    for k in range(3):
        assert (tmp_path / "runs" / "cv3" / f"fold{k}" / "model" / "model.pt").is_file()


# --- token_batches --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_token_batches_cover_every_index_once_within_budget(seed):
    rng = random.Random(seed)
    lengths = [rng.randint(1, 60) for _ in range(500)] + [150, 200]  # two rows longer than the budget
    batches = token_batches(lengths, max_tokens=128, seed=seed, max_rows=20)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 20
        if len(b) > 1:
            assert len(b) * max(lengths[i] for i in b) <= 128
    assert [len(b) for b in batches if any(lengths[i] > 128 for i in b)] == [1, 1], "oversize rows go alone"
    assert token_batches(lengths, 128, seed, 20) == batches, "deterministic for a seed"
    assert token_batches(lengths, 128, seed + 100, 20) != batches, "another seed, another order"


def test_token_batches_fill_the_budget_and_edge_cases():
    batches = token_batches([10] * 40, max_tokens=100)
    assert sorted(len(b) for b in batches) == [10, 10, 10, 10]
    assert token_batches([], 100) == []
    assert token_batches([5], 1) == [[0]]


def test_sentiment_init_from_a_translator_copies_its_tokenizer_embeddings_and_encoder(trained, data_root, tmp_path):
    """`init_from`: the classifier starts from the translator's English-reading encoder (CoVe-style transfer)."""
    from tx.checkpoint import load_model_dir
    from tx.tasks import SentimentConfig, SentimentTask

    source_dir = trained["translate"] / "model"
    source = load_model_dir(source_dir, "seq2seq")
    config = SentimentConfig(data_dir=str(data_root / "sentiment"), out_dir=str(tmp_path / "run"),
                             init_from=str(source_dir), model={"n_layers": 1, "d_model": 8, "dropout": 0.0})
    task = SentimentTask(config, quiet=True)
    model = task.build_model()
    assert task.tokenizer.to_str() == (source_dir / "tokenizer.json").read_text(encoding="utf-8")
    assert model.config.d_model == source.config.d_model and model.config.n_layers == 1  # shape from the source
    assert torch.equal(model.embed.table.weight, source.src_embed.table.weight)
    for name, tensor in model.encoder.layers[0].state_dict().items():
        assert torch.equal(tensor, source.encoder.layers[0].state_dict()[name]), name
    loss, count = task.loss(model, task.batches[0])  # and it trains like any classifier
    assert torch.isfinite(loss) and count == task.batches[0]["labels"].numel()


def test_translate_init_from_continues_the_model_with_its_tokenizer(trained, data_root, tmp_path):
    """`init_from` for translation: fine-tuning starts from the model dir's exact weights and tokenizer, whatever
    shape settings the run gives (only dropout follows the run)."""
    from tx.checkpoint import load_model_dir
    from tx.tasks import TranslateConfig, TranslateTask

    source_dir = trained["translate"] / "model"
    source = load_model_dir(source_dir, "seq2seq")
    config = TranslateConfig(data_dir=str(data_root / "translate"), out_dir=str(tmp_path / "run"),
                             init_from=str(source_dir), model={"d_model": 64, "dropout": 0.3}, eval_everyday=False,
                             eval_docs=0)
    task = TranslateTask(config, quiet=True)
    model = task.build_model()
    assert task.tokenizer.to_str() == (source_dir / "tokenizer.json").read_text(encoding="utf-8")
    assert model.config.d_model == source.config.d_model and model.config.dropout == 0.3
    for name, tensor in source.state_dict().items():
        assert torch.equal(model.state_dict()[name], tensor), name


def test_mix_weights_rows_by_source_and_kind():
    from tx.tasks import mix_rows, parse_mix

    rows = [{"de": str(i), "en": str(i), "kind": "word" if i % 2 else "sentence", "source": "ding"}
            for i in range(2000)] + [{"de": "d", "en": "d", "kind": "sentence", "source": "docs"}] * 10
    mixed = mix_rows(rows, parse_mix("ding.word=0.25,docs=3"), seed=0)
    kinds = Counter((r["source"], r["kind"]) for r in mixed)
    assert kinds[("ding", "sentence")] == 1000 and kinds[("docs", "sentence")] == 30
    assert 200 < kinds[("ding", "word")] < 300  # a quarter of 1,000, drawn
    assert mix_rows(rows, parse_mix("ding.word=0.25,docs=3"), seed=0) == mixed  # the same draw for a seed
    assert mix_rows(rows, {}, seed=0) == rows
    for bad in ("ding", "ding=-1", "=2", "ding=x"):
        with pytest.raises(ValueError, match="mix"):
            parse_mix(bad)


def test_select_by_must_name_an_evaluated_metric(data_root, tmp_path):
    from tx.tasks import TranslateConfig, TranslateTask

    with pytest.raises(ValueError, match="select_by"):
        TranslateTask(TranslateConfig(data_dir=str(data_root / "translate"), select_by="bleu"), quiet=True)
