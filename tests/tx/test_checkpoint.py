"""Checkpoint round-trips and clear errors for bad files."""
import pytest
import torch
from conftest import tiny_classifier, tiny_seq2seq

import tx


@pytest.mark.parametrize("make", [tiny_seq2seq, tiny_classifier])
def test_checkpoint_round_trip(tmp_path, make):
    model = make()
    path = tmp_path / "ckpt.pt"
    tx.save_checkpoint(path, model, step=7)
    assert tx.load_checkpoint(path)["step"] == 7
    loaded = tx.load_model(path)
    assert loaded.config == model.config
    ids = torch.randint(4, 40, (2, 5))
    args = (ids, ids) if isinstance(model, tx.Seq2SeqTransformer) else (ids,)
    torch.testing.assert_close(loaded(*args), model(*args))


@pytest.mark.parametrize("make", [tiny_seq2seq, tiny_classifier])
def test_model_dir_round_trip(tmp_path, make):
    model = make(pre_norm=True)
    tx.save_model_dir(tmp_path, model, tokenizer_json='{"x": 1}', meta={"labels": ["a", "b"]})
    assert tx.read_model_config(tmp_path)["meta"] == {"labels": ["a", "b"]}
    assert (tmp_path / "tokenizer.json").read_text() == '{"x": 1}'
    loaded = tx.load_model_dir(tmp_path)
    assert loaded.config == model.config and not loaded.training
    for a, b in zip(model.state_dict().values(), loaded.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_missing_file(tmp_path):
    with pytest.raises(tx.CheckpointError, match="not found"):
        tx.load_model(tmp_path / "nope.pt")
    with pytest.raises(tx.CheckpointError, match="not found"):
        tx.load_model_dir(tmp_path)


def test_truncated_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    tx.save_checkpoint(path, tiny_seq2seq())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(tx.CheckpointError, match="not a readable PyTorch file"):
        tx.load_model(path)


def test_weights_for_another_config(tmp_path):
    path = tmp_path / "ckpt.pt"
    tx.save_checkpoint(path, tiny_seq2seq())
    ckpt = torch.load(path, weights_only=True)
    ckpt["config"]["d_model"] = 64  # config now disagrees with the stored weights
    torch.save(ckpt, path)
    with pytest.raises(tx.CheckpointError, match="weights do not match the config"):
        tx.load_model(path)


def test_wrong_task_and_unknown_fields(tmp_path):
    path = tmp_path / "ckpt.pt"
    tx.save_checkpoint(path, tiny_classifier())
    with pytest.raises(tx.CheckpointError, match="expected seq2seq"):
        tx.load_model(path, kind="seq2seq")
    ckpt = torch.load(path, weights_only=True)
    ckpt["config"]["n_experts"] = 8
    torch.save(ckpt, path)
    with pytest.raises(tx.CheckpointError, match="config does not describe"):
        tx.load_model(path)


def test_not_a_checkpoint(tmp_path):
    path = tmp_path / "x.pt"
    torch.save({"hello": torch.zeros(1)}, path)
    with pytest.raises(tx.CheckpointError, match="not a tx checkpoint"):
        tx.load_model(path)
    (tmp_path / "config.json").write_text("{broken")
    with pytest.raises(tx.CheckpointError, match="not a tx model config"):
        tx.load_model_dir(tmp_path)
