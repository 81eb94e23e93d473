"""The GPU job (gpujob/), proven on the CPU before a GPU comes: pieces, the packed corpus, shards, what one command
may bring back, slim mode, the ship decision and the size check on the real plan (fast); and the whole path, pack ->
`python -m gpujob run` on the CPU (two detached runs of a tiny config) -> shards -> unpack -> the same state dict,
and resuming a stopped run (slow).

The synthetic corpus is written in the layout of data/processed/translate (`python -m corpus prepare`).
"""
from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

import tx
from gpujob import slim
from gpujob.carried import read_pieces_manifest
from gpujob.compare import SETS, compare, read_bleu
from gpujob.corpus import PackedCorpus, PackSettings, pack_corpus, unpack_corpus
from gpujob.handback import ReturnLimits, hand_back
from gpujob.job import DONE, MORE_TO_HAND_BACK, TRAINING
from gpujob.layout import DEFAULT_WORK, RESULT_DIR, check_outside
from gpujob.packed_task import PackedTranslateTask
from gpujob.pieces import PieceError, join_pieces, sha256_of, split_file
from gpujob.plan import BUDGET_MIN, LIMIT_BYTES, PLAN, assign, windows
from gpujob.rehearsal import synthetic_corpus as make_prepared_corpus
from gpujob.shards import MANIFEST, ShardError, read_shards, write_shards
from gpujob.sizes import measure, planned_weights_bytes, return_plan
from gpujob.tools import pack as pack_tool
from gpujob.tools import run as run_tool
from gpujob.tools import unpack as unpack_tool
from tx.checkpoint import cast_state
from tx.run_setup import make_config
from tx.tasks.translate import TranslateConfig, TranslateTask

REPO = Path(__file__).resolve().parents[2]
TINY_MODEL = {"vocab_size": 90, "d_model": 16, "n_heads": 2, "n_layers": 1, "n_decoder_layers": 1, "d_ff": 32,
              "max_len": 32, "dropout": 0.0}


def tiny_config(path: Path, data_dir: Path, pre_norm: bool, **extra) -> Path:
    """A planned run's config, as configs/translate-gpu-*.json but tiny and quick on one CPU thread."""
    values = {"out_dir": f"runs/tiny-{'preln' if pre_norm else 'postln'}", "data_dir": str(data_dir),
              "mix": "ding=1,catalogs=0.5", "model": {**TINY_MODEL, "pre_norm": pre_norm}, "lr": 3e-3,
              "warmup_steps": 2, "batch_tokens": 160, "max_steps": 4, "eval_every": 2, "average_last": 2,
              "select_by": "mean_bleu", "eval_docs": 4, "eval_everyday": False, "eval_sentences": 4, "amp": "none",
              "threads": 1, "log_every": 1, "max_src_len": 24, **extra}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))
    return path


def git_repo(root: Path) -> Path:
    """root as a git repository (the job measures what git would send)."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for key, value in (("user.email", "test@example.com"), ("user.name", "test")):
        subprocess.run(["git", "-C", str(root), "config", key, value], check=True)
    return root


# --- pieces ---------------------------------------------------------------------------------------------------------
def test_pieces_join_back_to_the_whole_and_name_a_damaged_or_missing_piece(tmp_path):
    whole_path = tmp_path / "blob.bin"
    whole_path.write_bytes(random.Random(1).randbytes(10_000))
    whole = split_file(whole_path, tmp_path / "pieces", 3_000)
    assert [p.bytes for p in whole.pieces] == [3000, 3000, 3000, 1000]
    joined = join_pieces(whole, [tmp_path / "elsewhere", tmp_path / "pieces"], tmp_path / "joined.bin")
    assert joined.read_bytes() == whole_path.read_bytes()
    damaged = tmp_path / "pieces" / whole.pieces[2].name
    damaged.write_bytes(b"x" + damaged.read_bytes()[1:])
    with pytest.raises(PieceError, match=f"{whole.pieces[2].name}: sha256 differs"):
        join_pieces(whole, [tmp_path / "pieces"], tmp_path / "again.bin")
    (tmp_path / "pieces" / whole.pieces[1].name).unlink()
    with pytest.raises(PieceError, match=f"{whole.pieces[1].name}: missing"):
        join_pieces(whole, [tmp_path / "pieces"], tmp_path / "again.bin")
    assert not (tmp_path / "again.bin").exists()


# --- the packed corpus ----------------------------------------------------------------------------------------------
def test_packed_corpus_gives_the_batches_the_text_task_would(tmp_path):
    """The pack applies the run's mix and tokenises: the packed task's batches are TranslateTask's, id for id."""
    data = make_prepared_corpus(tmp_path / "data")
    config = make_config("translate", tiny_config(tmp_path / "a.json", data, False), [])[0]
    pack_corpus(PackSettings.of(config), tmp_path / "corpus.tar.xz", log=lambda _: None)
    corpus_dir = unpack_corpus(tmp_path / "corpus.tar.xz", tmp_path / "corpus")
    corpus = PackedCorpus.read(corpus_dir)
    assert corpus.info["mixed_rows"] < corpus.info["train_rows"], "the mix (catalogs=0.5) was applied"
    packed = PackedTranslateTask(TranslateConfig(**{**config.__dict__, "data_dir": str(corpus_dir)}), quiet=True)
    text = TranslateTask(config, tokenizer=corpus.tokenizer, quiet=True)
    assert len(packed.batches) == len(text.batches) > 1
    for a, b in zip(packed.batches + packed.valid_batches, text.batches + text.valid_batches, strict=True):
        assert all(torch.equal(a[k], b[k]) for k in ("src_ids", "tgt_ids", "labels"))
    other = TranslateConfig(**{**config.__dict__, "data_dir": str(corpus_dir), "mix": "ding=1"})
    with pytest.raises(ValueError, match="packed for other data settings.*mix"):
        PackedTranslateTask(other, quiet=True)


def test_the_epochs_are_counted_from_the_batches_the_task_really_cuts(tmp_path):
    """`gpujob plan` turns the pack's recorded example costs into batches an epoch: the count must be what the
    packed task cuts, for any batch_rows (the row cap is what made short pairs cost whole steps)."""
    import random as random_module

    from gpujob.packed_task import batches_per_epoch, example_cost_counts
    from tx.batching import token_batches

    data = make_prepared_corpus(tmp_path / "data")
    for rows in (3, 8, 1024):
        config = make_config("translate", tiny_config(tmp_path / "a.json", data, False, batch_rows=rows), [])[0]
        pack_corpus(PackSettings.of(config), tmp_path / "corpus.tar.xz", log=lambda _: None)
        corpus = PackedCorpus.read(unpack_corpus(tmp_path / "corpus.tar.xz", tmp_path / "corpus"))
        task = PackedTranslateTask(TranslateConfig(**{**config.__dict__, "data_dir": str(tmp_path / "corpus")}),
                                   quiet=True)
        counts = example_cost_counts(corpus.train, config)
        assert sum(counts.values()) == 2 * len(corpus.train)
        assert batches_per_epoch(counts, config.batch_tokens, rows) == len(task.batches), rows
    rng = random_module.Random(3)
    costs = [rng.choice([4, 5, 6, 30, 31, 80]) for _ in range(5000)]
    counts = {c: costs.count(c) for c in set(costs)}
    for tokens, rows in ((24000, 1024), (24000, 4096), (600, 50), (100, 1000)):
        assert batches_per_epoch(counts, tokens, rows) == len(token_batches(costs, tokens, seed=7, max_rows=rows))


# --- shards and handing back ----------------------------------------------------------------------------------------
def test_shards_give_back_the_same_state_and_catch_damage(model_dir, tmp_path):
    out = tmp_path / "shards"
    manifest = write_shards(model_dir, out, "float16", shard_bytes=20_000)
    assert len(manifest["weights"]["pieces"]) > 2 and all(p["bytes"] <= 20_000 for p in manifest["weights"]["pieces"])
    _, state, _ = read_shards([out])
    expected = cast_state(torch.load(model_dir / "model.pt", weights_only=True), torch.float16)
    assert state.keys() == expected.keys() and all(torch.equal(state[k], expected[k]) for k in state)
    wrong = json.loads((out / MANIFEST).read_text())
    wrong["shapes"]["generator.weight"] = [1, 2]
    (tmp_path / "wrong").mkdir()
    (tmp_path / "wrong" / MANIFEST).write_text(json.dumps(wrong))
    with pytest.raises(ShardError, match="shapes differ"):
        read_shards([tmp_path / "wrong", out])
    (out / manifest["weights"]["pieces"][1]["name"]).write_bytes(b"damaged")
    with pytest.raises(ShardError, match="bytes, expected"):
        read_shards([out])


def test_hand_back_keeps_each_command_within_its_limits_and_brings_the_rest_next(model_dir, tmp_path):
    result = tmp_path / "result"
    pieces = write_shards(model_dir, result, "float32", shard_bytes=20_000)["weights"]["pieces"]
    limits = ReturnLimits(max_files=4, max_file_bytes=20_000, max_total_bytes=10**9)
    (tmp_path / "out1").mkdir()
    (tmp_path / "out1" / "progress.json").write_text("{}")  # what the command already returns counts too
    first, left = hand_back(result, tmp_path / "out1", limits)
    assert first == [MANIFEST, pieces[0]["name"], pieces[1]["name"]] and len(left) == len(pieces) - 2
    second, left2 = hand_back(result, tmp_path / "out2", limits)
    assert second[1:] == [p["name"] for p in pieces[2:5]] and left2 == [p["name"] for p in pieces[5:]]
    assert hand_back(result, tmp_path / "out3", limits, again=True)[0] == [MANIFEST, *(p["name"] for p in pieces[:3])]


# --- slim mode ------------------------------------------------------------------------------------------------------
def test_slim_takes_the_weights_out_of_what_travels_and_puts_the_same_entries_back(tmp_path):
    root = git_repo(tmp_path / "repo")
    (root / "models" / "translate").mkdir(parents=True)
    (root / "models" / "translate" / "model.pt").write_bytes(b"weights" * 100)
    (root / "models" / "translate" / "config.json").write_text("{}")
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "x"], check=True)
    index_before = subprocess.run(["git", "-C", str(root), "ls-files", "-s"], capture_output=True, text=True).stdout
    assert slim.slim_on(root) == ["models/translate/model.pt"]
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True).stdout.split()
    assert listed == ["models/translate/config.json"], "neither tracked nor untracked-not-ignored: it stays here"
    assert (root / "models" / "translate" / "model.pt").read_bytes() == b"weights" * 100
    assert slim.slim_off(root) == ["models/translate/model.pt"]
    assert subprocess.run(["git", "-C", str(root), "ls-files", "-s"], capture_output=True, text=True).stdout \
        == index_before
    assert subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True).stdout \
        == ""


# --- runs ---------------------------------------------------------------------------------------------------------
def test_a_run_that_died_before_writing_anything_is_failed_with_its_log(tmp_path):
    from gpujob.runs import FAILED, NOT_STARTED, PID_FILE, PlannedRun, read_error, state

    run = PlannedRun("a", tmp_path / "a.json", tmp_path / "a")
    assert state(run) == NOT_STARTED
    dead = subprocess.Popen(["true"])
    dead.wait()
    run.out_dir.mkdir()
    (run.out_dir / PID_FILE).write_text(f"{dead.pid}\n")
    (run.out_dir / "train.log").write_text("ModuleNotFoundError: No module named 'sacrebleu'\n")
    assert state(run) == FAILED and "No module named 'sacrebleu'" in read_error(run)


def test_the_library_imports_only_runtime_and_tx_and_never_its_commands():
    import ast

    wrong = {}
    for path in sorted((REPO / "gpujob").rglob("*.py")):
        names = {n.module if isinstance(n, ast.ImportFrom) else a.name for n in ast.walk(ast.parse(path.read_text()))
                 if isinstance(n, ast.Import | ast.ImportFrom) and getattr(n, "level", 0) == 0
                 for a in (n.names if isinstance(n, ast.Import) else [n])}
        project = {n.split(".")[0] for n in names if n} & {"runtime", "tx", "export", "playground", "gpujob"}
        relative_tools = "tools" not in path.parts and path.name != "__main__.py" and any(
            isinstance(n, ast.ImportFrom) and n.level and (n.module or "").startswith("tools")
            for n in ast.walk(ast.parse(path.read_text())))
        if project - {"runtime", "tx"} or relative_tools:
            wrong[str(path.relative_to(REPO))] = sorted(project - {"runtime", "tx"}) or ["gpujob.tools"]
    assert not wrong, wrong


# --- the ship decision ----------------------------------------------------------------------------------------------
def test_a_level_row_ships_unless_it_is_everyday_and_a_missing_set_never_ships(tmp_path):
    base = {(s, d): 10.0 for s in SETS for d in ("de-en", "en-de")}
    assert compare({k: v + 1 for k, v in base.items()}, base).ship
    for level in base:  # one row unchanged, the rest up 1: only an everyday row must rise
        ship = compare({k: v + (0 if k == level else 1) for k, v in base.items()}, base).ship
        assert ship == (level[0] != "everyday"), level
    assert not compare({k: v + 1 for k, v in base.items() if k[0] != "docs_test"}, base).ship, "a set missing"
    (tmp_path / "eval_everyday.json").write_text(json.dumps({"directions": {"de-en": {"bleu": 3.5}}}))
    assert read_bleu(tmp_path) == {("everyday", "de-en"): 3.5}


# --- the plan and its size check ------------------------------------------------------------------------------------
def test_pieces_go_to_commands_that_carry_their_kind_within_the_budget():
    pieces = [("corpus.000", 30, "corpus"), *((f"wheel.{i:03d}", 20, "wheels") for i in range(6))]
    carried = assign(pieces, budget=60)
    assert carried["corpus.000"] == PLAN[0].name == "c1-train"
    per_command = {c.name: sum(s for n, s, _ in pieces if carried[n] == c.name) for c in PLAN}
    assert per_command == {"c1-train": 30, "c2-rest": 0, "w1-pieces": 60, "w2-pieces": 60, "w3-pieces": 0,
                           "w4-pieces": 0, "w5-proof": 0}, "no wheel piece rides with the translator's calls"
    with pytest.raises(ValueError, match="fits no planned call"):
        assign([("corpus.000", 61, "corpus")], budget=60)


def test_the_real_plan_carries_within_the_device_limits():
    """Measured on this checkout (tracked and untracked files as git lists them; pieces on disk where they are, else
    their sizes in configs/gpujob/pieces.json); the weights' side is the slow test's (building the shape takes ~1 s)."""
    report = measure(REPO, weights=60 * 2**20)
    assert not report.problems, report.problems
    assert all(c.total <= LIMIT_BYTES for c in report.commands)
    carried = {c.name: c.carried for c in report.commands}
    assert carried["c1-train"] > 0 and carried["c2-rest"] == 0, "the corpus with the first call, nothing after"
    manifest = read_pieces_manifest(REPO)
    wheel_calls = {manifest.carried_by[p.name] for w in manifest.wholes["wheels"] for p in w.pieces}
    assert wheel_calls <= {c.name for c in PLAN if c.name.startswith("w")} and len(wheel_calls) <= 4
    assert report.slim_on or report.tracked_all + report.untracked > LIMIT_BYTES - 8 * 2**20, \
        "the premise of slim: without it the tracked tree alone leaves no room for the pieces"
    assert manifest.wholes["corpus"] and manifest.wholes["wheels"], "pack and wheels were recorded"


@pytest.mark.slow
def test_the_planned_weights_fit_the_models_budget_and_come_back_in_two_commands():
    config = make_config("translate", REPO / "configs" / "translate-v2.json", [])[0]
    weights = planned_weights_bytes(config.model)
    assert weights == 2 * sum(p.numel() for p in tx.Seq2SeqTransformer(config.model).parameters())
    others = sum(p.stat().st_size for p in (REPO / "models").rglob("*") if p.is_file() and p.name != "model.pt"
                 and "onnx" not in p.parts)
    sentiment = (REPO / "models" / "sentiment" / "model.pt").stat().st_size
    assert weights + sentiment + others <= 120e6, "everything under models/ with the new translator"
    report = measure(REPO, weights)
    assert not report.problems, report.problems
    assert len(report.returns) == 2 and all(f <= 8 and b <= 64 * 2**20 for f, b in report.returns)
    # the cuda window once v2 ships: the wheel as recorded and v2's weights (+ the classifier's) fit its calls
    manifest = read_pieces_manifest(REPO)
    wheel = sum(w.bytes for w in manifest.wholes["wheels"])
    carrying = [c for c in PLAN if "weights" in c.carries]
    assert wheel + weights + sentiment <= len(carrying) * manifest.budget_bytes


def test_the_size_check_fails_over_the_limits():
    manifest = read_pieces_manifest(REPO)
    over = type(manifest)(manifest.wholes, {name: PLAN[0].name for name, _, _ in manifest.pieces()},
                          manifest.budget_bytes, manifest.info)  # every piece on the first command
    problems = measure(REPO, 60 * 2**20, over).problems
    assert any(p.startswith(f"{PLAN[0].name} sends") for p in problems)
    assert any("returning commands" in p for p in measure(REPO, 200 * 2**20).problems), "weights too big to return"
    assert return_plan(200 * 2**20)[-1][0] <= 8 and len(return_plan(200 * 2**20)) == 4


def test_the_plan_fits_13_device_minutes_by_its_own_printed_sum_and_changes_nothing(capsys):
    from gpujob.plan import FINISH_S, TRAIN_SETUP_S, V2_CONFIG, max_time_of, wait_of, windows
    from gpujob.tools import plan as plan_tool

    before = {p: p.stat().st_mtime_ns for p in (REPO / "configs").rglob("*") if p.is_file()}
    for window in ("translate", "cuda"):
        assert plan_tool.main(["--window", window]) == 0, window
        printed = capsys.readouterr().out.splitlines()
        assert re.fullmatch(r"\d+\.\d device minutes", printed[-1]) and float(printed[-1].split()[0]) <= BUDGET_MIN
        steps = [float(m.group(1)) for line in printed if (m := re.match(r"  \S.*? +(\d+\.\d) min", line))]
        assert abs(sum(steps) - float(printed[-1].split()[0])) <= 0.05 * len(steps), "the total is the steps' sum"
        for call in windows()[window].calls:
            assert f"    command:   {call.command}" in printed and f"    timeout_s: {call.timeout_s}" in printed
            assert call.run_s < call.timeout_s, call.name
    assert {p: p.stat().st_mtime_ns for p in (REPO / "configs").rglob("*") if p.is_file()} == before
    # the run ends inside the first call's wait: start, max_time and the final evaluation
    c1 = windows()["translate"].calls[0]
    assert TRAIN_SETUP_S + max_time_of(REPO / V2_CONFIG) + FINISH_S < wait_of(c1.command) < c1.timeout_s
    assert "wheels" not in "".join(c for call in windows()["translate"].calls for c in call.carries)


def test_the_plan_exits_non_zero_over_13_minutes(monkeypatch, capsys):
    from gpujob import plan
    from gpujob.tools import plan as plan_tool

    monkeypatch.setattr(plan_tool, "windows", lambda: plan.windows(max_time=600))
    assert plan_tool.main([]) == 1
    assert re.fullmatch(r"\d+\.\d device minutes \(OVER .*\)", capsys.readouterr().out.splitlines()[-1])


def test_a_repacked_wheel_gives_back_the_same_members(tmp_path):
    import zipfile

    from gpujob.rehearsal import probe_wheel
    from gpujob.repack import repack_wheel, unpack_wheel

    wheel = probe_wheel(tmp_path / "whl")
    packed = repack_wheel(wheel, tmp_path / "packed")
    assert packed.name == wheel.name + ".xz" and packed.stat().st_size < wheel.stat().st_size
    back = unpack_wheel(packed, tmp_path)
    assert back.name == wheel.name
    with zipfile.ZipFile(wheel) as a, zipfile.ZipFile(back) as b:
        assert a.namelist() == b.namelist() and all(a.read(n) == b.read(n) for n in a.namelist())


def test_the_latency_section_is_replaced_or_added(tmp_path):
    from gpujob.cuda_proof import SECTION, record_section

    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\n## Latency on a GPU\nold table\n\n## More\nkept\n")
    record_section(readme, "new table\n")
    assert readme.read_text() == "# Title\n\n## Latency on a GPU\nnew table\n\n## More\nkept\n"
    other = tmp_path / "other.md"
    other.write_text("# Other\n")
    record_section(other, "table\n")
    assert other.read_text() == f"# Other\n\n{SECTION}\ntable\n"


def test_the_checklist_names_every_planned_command_and_its_carry():
    text = (REPO / "configs" / "README.md").read_text(encoding="utf-8")
    for command in PLAN:
        assert command.name in text and command.command in text, command.name
        assert not command.carries or command.carry in text, command.name
    assert "translate-v2.json" in text and "| call | device minutes used |" in text


# --- the whole path on the CPU --------------------------------------------------------------------------------------
@pytest.fixture
def job_root(tmp_path, monkeypatch) -> Path:
    root = git_repo(tmp_path / "repo")
    data = make_prepared_corpus(root / "data" / "processed" / "translate")
    tiny_config(root / "configs" / "a.json", data, pre_norm=False)
    tiny_config(root / "configs" / "b.json", data, pre_norm=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("GPUJOB_WORK", str(tmp_path / "work"))  # /tmp/gpujob's part, outside the checkout
    return root


def work_of(root: Path) -> Path:
    return root.parent / "work"


CONFIGS = ["--config", "configs/a.json", "--config", "configs/b.json"]


@pytest.mark.slow
def test_pack_run_on_cpu_shards_unpack_give_the_chosen_state_dict(job_root, capsys):
    assert pack_tool.main([*CONFIGS, "--piece-mib", "0.001"]) == 0
    assert len(read_pieces_manifest(job_root).wholes["corpus"][0].pieces) > 1, "several pieces to join"
    small = ["--shard-mib", "0.005", "--max-return-mib", "0.03", "--poll", "0.5", "--wait", "300"]
    assert run_tool.main(["--out", "out1", *CONFIGS, *small]) == MORE_TO_HAND_BACK
    assert run_tool.main(["--out", "out2", *CONFIGS, *small]) in (DONE, MORE_TO_HAND_BACK)
    folders = [job_root / "out1", job_root / "out2"]
    while run_tool.main(["--out", f"out{len(folders) + 1}", *CONFIGS, *small]) != DONE:
        folders.append(job_root / f"out{len(folders) + 1}")
        assert len(folders) < 20
    folders.append(job_root / f"out{len(folders) + 1}")
    progress = json.loads((job_root / "out1" / "progress.json").read_text())
    assert {v["state"] for v in progress.values()} == {"finished"} and len(progress) == 2
    chosen = json.loads((work_of(job_root) / RESULT_DIR / MANIFEST).read_text())["report"]["chosen"]
    scores = {name: v["result"]["score"] for name, v in progress.items()}
    assert chosen["run"] == max(scores, key=scores.get)
    # unpack: the other run's model plays the shipped one
    other = next(n for n in scores if n != chosen["run"])
    runs = {"a": work_of(job_root) / "runs" / "tiny-postln", "b": work_of(job_root) / "runs" / "tiny-preln"}
    shipped = job_root / "shipped"
    for name in ("config.json", "model.pt", "tokenizer.json"):
        (shipped / name).parent.mkdir(exist_ok=True)
        (shipped / name).write_bytes((runs[other] / "model" / name).read_bytes())
    argv = [*map(str, folders), "--candidate", "candidate", "--ship-to", str(shipped), "--data-dir",
            "data/processed/translate", "--method", "greedy", "--limit", "3"]
    assert unpack_tool.main(argv) == 0
    expected = cast_state(torch.load(runs[chosen["run"]] / "model" / "model.pt", weights_only=True), torch.float16)
    got = torch.load(job_root / "candidate" / "model.pt", weights_only=True)
    assert got.keys() == expected.keys() and all(torch.equal(got[k], expected[k]) for k in got)
    report = json.loads((job_root / "candidate" / "gpujob_report.json").read_text())
    assert len(report["comparison"]["rows"]) == 6 and report["chosen"] == chosen
    shipped_now = torch.load(shipped / "model.pt", weights_only=True)
    assert all(torch.equal(shipped_now[k], got[k]) for k in got) == report["comparison"]["ship"]
    assert (shipped / "metrics.json").is_file() == report["comparison"]["ship"]


def make_wheel(folder: Path) -> Path:
    """A real, tiny wheel (one module) that pip installs."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "gpujobprobe-1.0-py3-none-any.whl"
    files = {"gpujobprobe/__init__.py": "VALUE = 26\n" + "# padding\n" * 400,
             "gpujobprobe-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: gpujobprobe\nVersion: 1.0\n",
             "gpujobprobe-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                "Tag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + "gpujobprobe-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in {**files, "gpujobprobe-1.0.dist-info/RECORD": record}.items():
            z.writestr(name, text)
    return path


@pytest.mark.slow
def test_wheel_pieces_are_joined_checked_and_installed_offline(job_root, tmp_path):
    from gpujob.tools import install_wheels, wheels

    make_wheel(job_root / ".whl")
    assert wheels.main(["--piece-mib", "0.0002"]) == 0  # the repacked (xz) probe is ~400 bytes
    whole = read_pieces_manifest(job_root).wholes["wheels"][0]
    assert len(whole.pieces) > 1
    shutil.rmtree(job_root / "runs" / "gpujob" / "pieces")  # as on the GPU machine: only what the calls carried
    site = tmp_path / "site"
    assert install_wheels.main(["--target", str(site)]) == 0
    assert "VALUE = 26" in (site / "gpujobprobe" / "__init__.py").read_text()
    carried = next((job_root / "runs" / "gpujob" / "send").rglob(whole.pieces[-1].name))
    carried.write_bytes(carried.read_bytes()[:-1])
    shutil.rmtree(work_of(job_root))
    assert install_wheels.main(["--target", str(site), "--join-only"]) == 2


@pytest.mark.slow
def test_the_second_call_hands_back_the_rest_after_the_checkout_was_deleted_mid_training(job_root, tmp_path,
                                                                                          monkeypatch, capsys):
    """Issue 48: the device lays the checkout anew between calls. c1 starts the run and returns while it trains, its
    whole tree (the carried pieces, anything written under it) is deleted, and c2 runs in a fresh copy without the
    carry: the run still finishes and c2 hands back every shard, each with the manifest's sha256."""
    assert pack_tool.main([*CONFIGS[:2], "--piece-mib", "0.001"]) == 0
    small = [*CONFIGS[:2], "--shard-mib", "0.005", "--max-return-mib", "0.03", "--poll", "0.5"]
    outs = [tmp_path / "out1"]
    assert run_tool.main(["--out", str(outs[0]), *small, "--wait", "0"]) == TRAINING
    assert "a: started" in capsys.readouterr().out
    fresh = tmp_path / "fresh"
    shutil.copytree(job_root, fresh, ignore=shutil.ignore_patterns("runs"))  # c2 carries nothing
    shutil.rmtree(job_root)
    monkeypatch.chdir(fresh)
    while True:
        outs.append(tmp_path / f"out{len(outs) + 1}")
        code = run_tool.main(["--out", str(outs[-1]), *small, "--wait", "300"])
        if code == DONE or len(outs) > 20:
            break
        assert code == MORE_TO_HAND_BACK, code
    assert code == DONE
    later = capsys.readouterr().out
    assert "started" not in later and "resumed" not in later, "c2 must hand back c1's run, not train another"
    starts = [line for line in (work_of(job_root) / "runs" / "tiny-postln" / "train.log").read_text().splitlines()
              if line.startswith("$ ")]
    assert len(starts) == 1, starts
    manifest = json.loads((outs[-1] / MANIFEST).read_text())
    back = {p.name: sha256_of(p) for out in outs for p in out.glob("model.pt.*")}
    assert len(manifest["weights"]["pieces"]) > 2, "several returns"
    assert back == {piece["name"]: piece["sha256"] for piece in manifest["weights"]["pieces"]}
    read_shards(outs)  # the whole's sha256, the shapes, a forward pass


def test_the_work_folder_must_lie_outside_the_checkout_and_later_calls_run_from_its_code_copy(tmp_path):
    with pytest.raises(ValueError, match="inside the checkout"):
        check_outside(tmp_path / "repo" / "runs" / "work", tmp_path / "repo")
    check_outside(tmp_path / "work", tmp_path / "repo")
    later = [c for w in windows(max_time=60).values() for c in w.calls][1]
    assert later.name == "c2-rest" and f"cd {DEFAULT_WORK / 'code'} && " in later.command


@pytest.mark.slow
def test_a_stopped_run_resumes_with_more_time(job_root):
    assert pack_tool.main(CONFIGS[:2]) == 0
    fast = ["--poll", "0.5", "--wait", "300", *CONFIGS[:2]]
    assert run_tool.main(["--out", "out1", *fast, "--set", "max_steps=2"]) == DONE
    run = work_of(job_root) / "runs" / "tiny-postln"
    first = json.loads((run / "result.json").read_text())
    assert first["step"] == 2
    assert run_tool.main(["--out", "out2", *fast, "--resume", "--max-time", "120", "--set", "max_steps=6"]) == DONE
    resumed = json.loads((run / "result.json").read_text())
    steps = [int(line.split(",")[0]) for line in (run / "metrics.csv").read_text().splitlines()[1:]]
    assert resumed["step"] == 6 and steps == [2, 4, 6], "continued from step 2, not started over"
    log = (run / "train.log").read_text()
    started = [line for line in log.splitlines() if line.startswith("$ ")]
    assert len(started) == 2 and "--resume" in started[1] and "max_time=120" in started[1]
    evaluated_after = [line.split(",")[0] for line in log.split(started[1])[1].splitlines()
                       if line.startswith("[eval]")]
    assert evaluated_after == ["[eval] step 4", "[eval] step 6"], "the second process trained steps 3-6 only"


@pytest.mark.slow
def test_the_rehearsal_runs_both_windows_on_the_cpu_and_does_not_ship(tmp_path):
    """Every call of both windows run in a scratch copy: carries within 64 MiB, returns within the limits, the two
    returns unpacked, the tiny candidate not shipped, models/ untouched, the latency section recorded."""
    from gpujob.rehearsal import rehearse

    result = rehearse(REPO, tmp_path, log=print)
    problems = {c["name"]: (c["exit_code"], c["problems"]) for c in result["calls"]}
    assert result["ok"], (problems, result)
    assert [c["name"] for c in result["calls"]] == [c.name for c in PLAN]
    assert not result["shipped"] and result["models_untouched"] and result["latency_recorded"]
    assert all(c["sent_bytes"] <= LIMIT_BYTES for c in result["calls"])
