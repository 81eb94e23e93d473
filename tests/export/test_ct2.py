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


def test_steering_options_agree_with_ctranslate2_on_a_tiny_model(tmp_path):
    """target_prefix (greedy) and return_alternatives mean what CTranslate2 means by them: same tokens."""
    from export.ct2 import steering_check

    model_dir = build_translation_dir(tmp_path / "model", seed=6)
    out = convert(model_dir, tmp_path / "ct2")
    rows = [{"de": de, "en": en} for de, en in zip(GERMAN, ENGLISH, strict=True)]
    for src, tgt in (("de", "en"), ("en", "de")):
        a = steering_check(model_dir, out, rows, src, tgt, alternatives=4, max_len=40)
        assert (a.same_prefixed, a.same_alternative_sets, a.same_completions) == (len(rows),) * 3, a.differences


@pytest.mark.slow
def test_steering_agrees_with_ctranslate2_on_50_held_out_sentences_of_the_shipped_translator(tmp_path):
    """The issue's peer check, on the shipped weights in fp32: 50 held-out sentences (samples.tsv holds the first
    rows of the test split), prefix = the first half of the reference translation, both directions: greedy with the
    prefix gives identical tokens and the 5 alternatives after it are the same set (measured: every completion
    identical too, docs/steering.md)."""
    from pathlib import Path

    from export.ct2 import steering_check
    from runtime.tsv import read_tsv

    model_dir = Path(__file__).resolve().parents[2] / "models" / "translate"
    rows = read_tsv(model_dir / "samples.tsv")[:50]
    out = convert(model_dir, tmp_path / "ct2")
    for src, tgt in (("de", "en"), ("en", "de")):
        a = steering_check(model_dir, out, rows, src, tgt)
        assert (a.sentences, a.same_prefixed, a.same_alternative_sets) == (50, 50, 50), a.differences
