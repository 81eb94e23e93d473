"""runtime.coverage: when a text is mostly outside what a model knows, the result says so (both runtimes)."""
from __future__ import annotations

import pytest
from export_fixtures import exported

from runtime import OnnxSentimentClassifier, OnnxTranslator
from runtime.coverage import coverage, warning
from tx.inference import SentimentAnalyzer, Translator
from tx.tokenizer import Tokenizer

pytestmark = pytest.mark.exports

OUTSIDE = {"emoji": "😀🎉🔥👍🏽", "chinese": "这部电影很好看", "arabic": "فيلم رائع جدا", "digits": "12345 !!!"}
INSIDE = {"review": "A warm, funny and honest little film.", "one emoji": "A warm, funny film, I loved it 😀",
          "german": "Ein schöner Film über Straßenkünstler."}


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.load(exported("sentiment") / "tokenizer.json")


@pytest.mark.parametrize("name", list(OUTSIDE))
def test_text_outside_the_training_scripts_gets_a_warning(tokenizer, name):
    text = OUTSIDE[name]
    c = coverage(text, tokenizer.tokens(tokenizer.encode(text)))
    assert warning(c) and "outside what the model was trained on" in warning(c)


@pytest.mark.parametrize("name", list(INSIDE))
def test_latin_text_gets_none(tokenizer, name):
    text = INSIDE[name]
    assert warning(coverage(text, tokenizer.tokens(tokenizer.encode(text)))) is None


def test_shares_by_hand():
    c = coverage("ab漢字", ["a", "b", "<unk>", "<unk>"])
    assert (c.unknown_share, c.non_latin_share, c.letters) == (0.5, 0.5, 4)
    assert warning(c) is not None and "50% of its pieces are unknown" in warning(c)
    assert warning(coverage("abc漢", ["a", "b", "c", "<unk>"])) is None  # 25% unknown, 25% non-Latin: fine
    assert "no letters" in warning(coverage("🙂", ["<unk>"]))
    assert coverage("", []).unknown_share == 0.0


@pytest.mark.parametrize("make", [SentimentAnalyzer.from_dir, OnnxSentimentClassifier], ids=["torch", "onnx"])
def test_both_runtimes_put_the_warning_on_the_prediction(make):
    model = make(exported("sentiment"))
    emoji, review = model.classify([OUTSIDE["emoji"], INSIDE["review"]])
    assert emoji.warning and review.warning is None


@pytest.mark.parametrize("make", [Translator.from_dir, OnnxTranslator], ids=["torch", "onnx"])
def test_translations_carry_the_warning_too(make):
    model = make(exported("translate"))
    chinese, german = model.translate([OUTSIDE["chinese"], INSIDE["german"]], "de", "en", method="greedy", max_len=5)
    assert chinese.warning and "script the model never read" in chinese.warning and german.warning is None
