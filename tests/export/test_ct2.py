"""export.ct2: CTranslate2 (an optional peer) runs our weights and gives PyTorch's greedy output token for token."""
from __future__ import annotations

import pytest
from export_fixtures import ENGLISH, GERMAN, build_translation_dir

ctranslate2 = pytest.importorskip("ctranslate2", reason="ctranslate2 is an optional peer (pip install ctranslate2)")

from export.ct2 import check, convert, main, reference_prefix  # noqa: E402


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


def test_a_tiny_length_penalty_scores_as_none_in_float32():
    """MATCHING_ALPHA stands for α = 0 in CTranslate2 without its early exit: length^α must round to exactly 1.0
    in float32 (CTranslate2's score type) at every length a target can have."""
    import numpy as np

    from export.ct2_beam import MATCHING_ALPHA

    lengths = np.arange(1, 4097, dtype=np.float32)
    assert MATCHING_ALPHA > 0 and (np.power(lengths, np.float32(MATCHING_ALPHA)) == np.float32(1.0)).all()


def eos_prone_translation_dir(path, seed: int = 7, scale: float = 0.6):
    """The tiny translator with `</s>`'s output row a scaled copy of its most generated token's: a random tiny
    model never ends by itself (every search runs to max_len, where no stopping rule is tested); this one ends
    some sentences at once and runs others to the end, and offers `</s>` among its alternatives."""
    from collections import Counter

    import torch

    import tx
    from tx.inference import Translator

    model_dir = build_translation_dir(path, seed=seed)
    outputs = Translator.from_dir(model_dir).translate(GERMAN + ENGLISH, "de", "en", method="greedy", max_len=24)
    common = Counter(t for o in outputs for t in o.token_ids).most_common(1)[0][0]
    model = tx.load_model_dir(model_dir, "seq2seq")
    eos = Translator.from_dir(model_dir).tokenizer.eos_id
    with torch.no_grad():
        model.generator.weight[eos] = model.generator.weight[common] * scale  # tied: the source's </s> too
    tx.save_model_dir(model_dir, model, (model_dir / "tokenizer.json").read_text(),
                      tx.read_model_config(model_dir)["meta"])
    return model_dir


@pytest.mark.parametrize("eos_prone", [False, True], ids=["tiny", "tiny-eos-prone"])
def test_beam_n_best_and_alternatives_agree_with_ctranslate2_on_a_tiny_model(tmp_path, eos_prone):
    """Beam 4's n best (n = 1..4, token level) and its alternatives, at the first position (no prefix) and after
    a prefix, are CTranslate2's token for token at the settings export/ct2_beam.py says score alike."""
    from export.ct2_beam import beam_check

    model_dir = (eos_prone_translation_dir if eos_prone else build_translation_dir)(tmp_path / "model", seed=7)
    out = convert(model_dir, tmp_path / "ct2")
    rows = [{"de": de, "en": en} for de, en in zip(GERMAN, ENGLISH, strict=True)]
    for src, tgt in (("de", "en"), ("en", "de")):
        prefixes = [reference_prefix(r[tgt]) for r in rows]
        a = beam_check(model_dir, out, rows, src, tgt, prefixes, beam=4, alternatives=4, max_len=24)
        n = len(rows)
        assert a.same_n_best == [n] * 4, a.differences
        assert (a.same_first_alternatives, a.same_first_completions) == (n, n), a.differences
        assert (a.same_prefixed_alternatives, a.same_prefixed_completions) == (n, n), a.differences


@pytest.mark.slow
def test_beam_agrees_with_ctranslate2_on_30_held_out_sentences_of_the_shipped_translator(tmp_path):
    """On the shipped weights (fp32), where sentences end at different lengths and CTranslate2's early exit (its
    rule at length_penalty 0) gave other n best for 5 of 30 sentences at n = 4: at the matching settings every
    n best and every alternative is identical (docs/steering.md has the 100-sentence figures)."""
    from pathlib import Path

    from export.ct2_beam import beam_check
    from runtime.tsv import read_tsv

    model_dir = Path(__file__).resolve().parents[2] / "models" / "translate"
    rows = read_tsv(model_dir / "samples.tsv")[:30]
    out = convert(model_dir, tmp_path / "ct2")
    a = beam_check(model_dir, out, rows, "de", "en", [reference_prefix(r["en"]) for r in rows])
    assert a.same_n_best == [30] * 4, a.differences
    assert (a.same_first_completions, a.same_prefixed_completions) == (30, 30), a.differences
