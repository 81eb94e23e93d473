"""export.ct2: CTranslate2 (an optional peer) runs our weights and gives PyTorch's greedy output token for token."""
from __future__ import annotations

import pytest
from export_fixtures import ENGLISH, GERMAN, build_translation_dir

ctranslate2 = pytest.importorskip("ctranslate2", reason="ctranslate2 is an optional peer (pip install ctranslate2)")

from export.ct2 import check, convert, main  # noqa: E402


@pytest.mark.parametrize("pre_norm", [False, True], ids=["post-LN", "pre-LN"])
def test_converted_greedy_output_equals_pytorch(tmp_path, pre_norm):
    model_dir = build_translation_dir(tmp_path / "model", seed=3)
    if pre_norm:  # the same tiny model, pre-LN (its final LayerNorms must travel too)
        import json

        import torch

        import tx

        config = json.loads((model_dir / "config.json").read_text())["config"] | {"pre_norm": True}
        torch.manual_seed(3)
        model = tx.Seq2SeqTransformer(tx.Seq2SeqConfig(**config)).eval()
        stored = tx.read_model_config(model_dir)
        tx.save_model_dir(model_dir, model, (model_dir / "tokenizer.json").read_text(), stored["meta"])
    out = convert(model_dir, tmp_path / "ct2")
    assert (out / "model.bin").is_file()
    for texts, src, tgt in ((GERMAN, "de", "en"), (ENGLISH, "en", "de")):
        assert check(model_dir, out, texts, src, tgt) == (len(texts), len(texts))


def test_cli_converts_int8_and_reports_agreement(tmp_path, capsys, monkeypatch):
    model_dir = build_translation_dir(tmp_path / "model", seed=4)
    monkeypatch.chdir(tmp_path)  # the default output is relative to the working directory
    assert main([str(model_dir), "--quantization", "int8", "--check", "5"]) == 0
    printed = capsys.readouterr().out
    assert (tmp_path / "runs" / "ct2" / "model-int8" / "model.bin").is_file()
    assert not list(model_dir.glob("ct2*")), "a conversion must not land among the shipped files"
    assert "de->en: greedy output identical to PyTorch for " in printed and " of 5 sentences" in printed


def test_cli_compares_on_held_out_test_sentences_when_asked(tmp_path, capsys, monkeypatch):
    from runtime.tsv import write_tsv

    monkeypatch.chdir(tmp_path)

    model_dir = build_translation_dir(tmp_path / "model", seed=5)
    write_tsv(tmp_path / "data" / "translate" / "test.tsv", ["de", "en"],
              list(zip(GERMAN[:4], ENGLISH[:4], strict=True)))
    assert main([str(model_dir), "--test-sentences", "3", "--data-dir", str(tmp_path / "data")]) == 0
    printed = capsys.readouterr().out
    assert f"on {tmp_path / 'data' / 'translate' / 'test.tsv'}" in printed
    assert "de->en: greedy output identical to PyTorch for 3 of 3 sentences" in printed
    assert "en->de: greedy output identical to PyTorch for 3 of 3 sentences" in printed
