"""The Train-your-own page's server side (playground.training: files, runs, slot) without a browser: the
slot admits one training at a time in arrival order, uploads stay inside the session's folder, which goes with the
session, the page's numbers agree with tx.toy's, and a half-written event line waits for the next read."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
import zipfile
from io import BytesIO

from playground.training import files as training_files
from playground.training import runs as training_runs
from playground.training import slot as training_slot
from runtime import providers, toy
from tx.toy import engine, worker


def test_the_page_states_the_limits_tx_toy_enforces():
    assert worker.parse is toy.parse  # the worker checks a file with the very limits the page checked it with
    assert toy.UPLOAD_LIMITS == (f"At most {toy.MAX_ROWS:,} rows, {toy.MAX_TOKENS} tokens a side, "
                                 f"{toy.MAX_VOCAB:,} distinct tokens, {toy.MAX_BYTES // 10**6} MB")
    assert toy.MAX_PARAMETERS == engine.MAX_PARAMETERS


def test_the_page_counts_parameters_as_torch_does():
    for changes in ({}, {"pre_norm": True, "d_model": 32, "n_heads": 2, "n_layers": 3, "n_decoder_layers": 1},
                    {"task": "add", "d_ff": 64}):
        config = engine.RunConfig(**changes)
        vocab = training_runs.vocabulary_size(vars(config), None)
        model = engine.build_model(config, vocab, 12)
        assert training_runs.parameter_count(vars(config), vocab) == sum(p.numel() for p in model.parameters())


def test_one_training_at_a_time_first_come_first_served():
    slot = training_slot.TrainingSlot()
    assert slot.try_enter("a", 60) == 0
    assert slot.try_enter("b", 60) == 1 and slot.try_enter("c", 60) == 2 and slot.try_enter("b", 60) == 1
    assert 0 < slot.wait_left() <= 60
    slot.leave("a")
    assert slot.try_enter("c", 60) == 2  # b came first: c waits even though the slot is free
    assert slot.try_enter("b", 60) == 0 and slot.try_enter("c", 60) == 1
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    slot.attach("b", finished)  # b's worker is gone without b leaving (its session vanished): the slot frees itself
    assert slot.try_enter("c", 60) == 0


def test_uploads_stay_in_the_sessions_folder_which_goes_with_the_session():
    files = training_files.SessionFiles()
    root = files.root
    for name in ("../../evil.tsv", "/etc/passwd", "x.csv", "noext"):
        path = training_files.save_upload(files, name, b"a\tb\n")
        assert path.parent == root and path.name in training_files.UPLOAD_NAMES.values()
    run = files.new_run_dir()
    session_key = (str(run / "onnx" / "encoder.fp32.onnx"), 1, 1, "cpu", 1)  # as runtime.providers keys a session
    providers._sessions[session_key] = "a toy model's onnxruntime session"
    files.forget(root.parent)  # never outside its own folder
    assert root.is_dir() and run.is_dir()
    files.forget(run)
    assert not run.exists() and session_key not in providers._sessions  # its sessions go with it
    del files
    gc.collect()
    assert not root.exists()


def test_events_are_read_whole_lines_at_a_time(tmp_path):
    path = tmp_path / toy.EVENTS_FILE
    path.write_text(json.dumps({"event": "start"}) + "\n" + '{"event": "st')
    reader = training_runs.EventReader(path)
    assert [e["event"] for e in reader.read()] == ["start"]
    with open(path, "a") as f:
        f.write('ep", "step": 1}\n')
    assert reader.read() == [{"event": "step", "step": 1}] and len(reader.events) == 2


def test_the_model_zip_holds_the_directory_under_model(tmp_path):
    (tmp_path / "onnx").mkdir()
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "onnx" / "encoder.fp32.onnx").write_bytes(b"x")
    names = zipfile.ZipFile(BytesIO(training_files.model_zip(tmp_path))).namelist()
    assert sorted(names) == ["model/config.json", "model/onnx/encoder.fp32.onnx"]
