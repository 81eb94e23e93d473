"""Text-level API: Translator and SentimentAnalyzer on tiny models with a tokenizer trained here."""
import numpy as np
import pytest
import torch
from conftest import tiny_classifier, tiny_seq2seq

import tx
from runtime.decoding import beam_search, greedy, prefix_log_probs, top_k_numpy
from runtime.text import TextClassifier, TextTranslator
from tx.decoding import TorchBackend
from tx.inference import Prediction, SentimentAnalyzer, Translation, Translator
from tx.tokenizer import SPECIALS, train_tokenizer

GERMAN = ["Ich trinke keinen Alkohol.", "Kannst du Auto fahren?", "Das Wetter ist heute schön.",
          "Wo ist die nächste Apotheke?", "Die Kinder spielen im Garten.", "Wie viel kostet diese Jacke?"]
ENGLISH = ["I don't drink alcohol.", "Can you drive a car?", "The weather is nice today.",
           "Where is the nearest pharmacy?", "The children are playing in the garden.", "How much is this jacket?"]
REVIEWS = ["a wonderful, moving film", "dull and far too long", "the best thing this year",
           "a waste of a good cast", "funny, warm and clever", "i hated every minute"]
ODD_TEXTS = ["😀🎉 great", "中文 日本語 한국어", "tab\tnull\x00bell\x07 esc\x1b[0m", "\u200b zero\u200bwidth",
             "ﬁ ligature Ⅻ", "\x00\x01\x02"]  # the last may tokenize to nothing at all
TO_EN, TO_DE = SPECIALS.index("<2en>"), SPECIALS.index("<2de>")
TRANSLATE_META = {"task": "translate", "directions": [["de", "en"], ["en", "de"]], "max_src_len": 24}
SENTIMENT_META = {"task": "sentiment", "labels": ["negative", "positive"], "max_len": 16}


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(GERMAN + ENGLISH + REVIEWS, vocab_size=120, min_frequency=1)


@pytest.fixture
def translator(tokenizer) -> Translator:
    return Translator(tiny_seq2seq(vocab_size=tokenizer.vocab_size), tokenizer, TRANSLATE_META)


@pytest.fixture
def analyzer(tokenizer) -> SentimentAnalyzer:
    return SentimentAnalyzer(tiny_classifier(vocab_size=tokenizer.vocab_size), tokenizer, SENTIMENT_META)


def tokenizer_json(tokenizer, tmp_path) -> str:
    tokenizer.save(tmp_path / "tok.json")
    return (tmp_path / "tok.json").read_text(encoding="utf-8")


# --- Translator --------------------------------------------------------------------------------------------------


def test_translation_fields_follow_the_contract(translator, tokenizer):
    [t] = translator.translate([GERMAN[0]], method="greedy", max_len=10)
    assert isinstance(t, Translation)
    assert t.src_tokens[0] == "<2en>" and t.src_tokens[-1] == "</s>"
    assert t.src_tokens == tokenizer.tokens([TO_EN] + tokenizer.encode(GERMAN[0]) + [tokenizer.eos_id])
    assert 1 <= len(t.token_ids) <= 10 and t.tokens == tokenizer.tokens(t.token_ids)
    assert t.text == tokenizer.decode(t.token_ids)
    assert not t.truncated and t.attention is None
    assert np.isfinite(t.score) and t.score < 0
    [back] = translator.translate([ENGLISH[0]], src_lang="en", tgt_lang="de", method="greedy", max_len=5)
    assert back.src_tokens[0] == "<2de>"


@pytest.mark.parametrize("method", ["greedy", "beam", "sample"])
def test_batches_come_back_in_input_order_and_equal_one_by_one(translator, method):
    texts = [GERMAN[3], "Ja.", GERMAN[1] + " " + GERMAN[2], GERMAN[0]]
    kw = dict(method=method, max_len=12, seed=3, top_k=1)  # top_k=1 makes sampling deterministic per text
    together = translator.translate(texts, **kw)
    alone = [translator.translate([text], **kw)[0] for text in texts]
    assert [t.token_ids for t in together] == [t.token_ids for t in alone]
    assert [t.score for t in together] == pytest.approx([t.score for t in alone], abs=1e-4)


def test_more_texts_than_one_batch(translator):
    texts = [f"{GERMAN[i % 6]} {'noch ' * (i % 5)}".strip() for i in range(40)]  # 40 > BATCH_SIZE, varied lengths
    out = translator.translate(texts, method="greedy", max_len=4)
    assert len(out) == 40
    for i in (0, 7, 33, 39):
        [alone] = translator.translate([texts[i]], method="greedy", max_len=4)
        assert (out[i].src_tokens, out[i].token_ids) == (alone.src_tokens, alone.token_ids)


def test_greedy_through_the_text_api_equals_the_search_itself(translator, tokenizer):
    [t] = translator.translate([GERMAN[4]], method="greedy", max_len=9)
    ids = np.array([[TO_EN] + tokenizer.encode(GERMAN[4]) + [tokenizer.eos_id]])
    [h] = greedy(TorchBackend(translator.model), ids, ids != 0, max_len=9)
    assert t.token_ids == h.tokens


@pytest.mark.parametrize("texts", [[""], ["   \n\t "], [GERMAN[0], ""]])
def test_empty_text_is_a_clear_error(translator, texts):
    with pytest.raises(ValueError, match="^empty text"):
        translator.translate(texts)


@pytest.mark.parametrize("kw, message", [
    (dict(src_lang="fr"), "de->en, en->de, not fr->en"),
    (dict(src_lang="en", tgt_lang="en"), "not en->en"),
    (dict(method="viterbi"), "unknown method"),
    (dict(method="sample", temperature=0), "temperature"),
    (dict(method="beam", beam=0), "beam"),
])
def test_bad_options_are_clear_errors(translator, kw, message):
    with pytest.raises(ValueError, match=message):
        translator.translate([GERMAN[0]], **kw)


def test_a_bare_string_is_rejected_with_advice(translator):
    with pytest.raises(ValueError, match="wrap it in a list"):
        translator.translate(GERMAN[0])


def test_an_empty_list_gives_an_empty_list(translator, analyzer):
    assert translator.translate([]) == [] and analyzer.classify([]) == []


def test_very_long_text_is_truncated_and_flagged(translator):
    long_text = ("Das Wetter ist heute schön. " * 400)[:10_000]
    short, long = translator.translate([GERMAN[0], long_text], method="greedy", max_len=5)
    assert long.truncated and not short.truncated
    assert len(long.src_tokens) == TRANSLATE_META["max_src_len"] and long.src_tokens[-1] == "</s>"


def test_unusual_characters_go_through(translator):
    out = translator.translate(ODD_TEXTS, method="beam", beam=2, max_len=6)
    assert len(out) == len(ODD_TEXTS)
    assert all(isinstance(t.text, str) and t.src_tokens[0] == "<2en>" for t in out)


def test_sampling_through_the_text_api_is_reproducible(translator):
    kw = dict(method="sample", temperature=1.3, top_p=0.9, max_len=12)
    a = translator.translate(GERMAN, seed=11, **kw)
    b = translator.translate(GERMAN, seed=11, **kw)
    c = translator.translate(GERMAN, seed=12, **kw)
    assert [t.token_ids for t in a] == [t.token_ids for t in b] != [t.token_ids for t in c]


def test_attention_maps_line_up_with_the_tokens(translator):
    out = translator.translate([GERMAN[2], "Ja."], method="beam", beam=3, max_len=7, attention="all")
    config = translator.model.config
    for t in out:
        s, n = len(t.src_tokens), len(t.tokens)
        assert set(t.attention) == {"encoder", "self", "cross"}
        assert [w.shape for w in t.attention["encoder"]] == [(config.n_heads, s, s)] * config.n_layers
        assert [w.shape for w in t.attention["self"]] == [(config.n_heads, n, n)] * config.n_decoder_layers
        assert [w.shape for w in t.attention["cross"]] == [(config.n_heads, n, s)] * config.n_decoder_layers
        for w in t.attention["cross"] + t.attention["encoder"] + t.attention["self"]:
            np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)  # pads cut off: rows are whole distributions


def test_from_dir_loads_a_model_directory(tmp_path, tokenizer):
    model = tiny_seq2seq(vocab_size=tokenizer.vocab_size)
    tx.save_model_dir(tmp_path / "m", model, tokenizer_json(tokenizer, tmp_path), TRANSLATE_META)
    loaded = Translator.from_dir(tmp_path / "m")
    direct = Translator(model, tokenizer, TRANSLATE_META)
    kw = dict(method="beam", max_len=8)
    assert [t.token_ids for t in loaded.translate(GERMAN[:3], **kw)] == \
        [t.token_ids for t in direct.translate(GERMAN[:3], **kw)]
    with pytest.raises(tx.CheckpointError, match="classifier"):
        SentimentAnalyzer.from_dir(tmp_path / "m")
    (tmp_path / "m" / "tokenizer.json").unlink()
    with pytest.raises(tx.CheckpointError, match="tokenizer.json"):
        Translator.from_dir(tmp_path / "m")


def test_text_translator_works_over_any_backend(tokenizer):
    """TextTranslator only talks to the step interface: a backend that wraps another one is enough."""

    class Counting:
        def __init__(self, inner):
            self.inner, self.steps = inner, 0
            self.max_source_len, self.max_target_len = inner.max_source_len, inner.max_target_len

        def encode(self, src_ids, src_mask):
            return self.inner.encode(src_ids, src_mask)

        def step(self, tokens, state, attention=False):
            self.steps += 1
            return self.inner.step(tokens, state, attention)

        def cross_attention(self, state):
            return self.inner.cross_attention(state)

        def reorder(self, state, index):
            return self.inner.reorder(state, index)

        def top_k(self, values, k):
            return top_k_numpy(values, k)

        def attention(self, src_ids, src_mask, tgt_ids):
            return self.inner.attention(src_ids, src_mask, tgt_ids)

    model = tiny_seq2seq(vocab_size=tokenizer.vocab_size)
    backend = Counting(TorchBackend(model))
    out = TextTranslator(backend, tokenizer, TRANSLATE_META).translate(GERMAN[:2], method="beam", max_len=5)
    assert backend.steps > 0
    assert [t.token_ids for t in out] == \
        [t.token_ids for t in Translator(model, tokenizer, TRANSLATE_META).translate(GERMAN[:2], max_len=5)]


def test_steering_through_the_text_api_equals_the_searches_on_the_torch_backend(translator, tokenizer):
    """tx.inference.Translator steers through TextTranslator over its own TorchBackend: the same tokens as the
    searches run by hand on that backend with the same forced prefix (and, for alternatives, the same top-k)."""
    prefix = tokenizer.encode("The weather")
    ids = np.array([[TO_EN] + tokenizer.encode(GERMAN[2]) + [tokenizer.eos_id]])
    backend = TorchBackend(translator.model)
    [t] = translator.translate([GERMAN[2]], method="greedy", max_len=9, target_prefix=["The weather"])
    [h] = greedy(backend, ids, ids != 0, max_len=9, target_prefix=[prefix])
    assert t.token_ids == h.tokens and t.token_ids[:len(prefix)] == prefix and t.prefix_len == len(prefix)
    [n_best] = translator.translate_n_best([GERMAN[2]], method="beam", beam=3, num_hypotheses=3, max_len=9)
    assert [x.token_ids for x in n_best] == [x.tokens for x in beam_search(backend, ids, ids != 0, 9, beam=3,
                                                                             num_hypotheses=3)[0]]
    [alternatives] = translator.translate_n_best([GERMAN[2]], method="greedy", max_len=9, target_prefix=["The"],
                                                 return_alternatives=True, num_hypotheses=3)
    after = prefix_log_probs(backend, ids, ids != 0, [tokenizer.encode("The")])[0]
    assert [a.token_ids[a.prefix_len] for a in alternatives] == np.argsort(-after, kind="stable")[:3].tolist()


# --- SentimentAnalyzer -------------------------------------------------------------------------------------------


def test_predictions_follow_the_contract_and_the_model(analyzer, tokenizer):
    preds = analyzer.classify(REVIEWS)
    ids = [tokenizer.encode(text) for text in REVIEWS]
    for pred, row in zip(preds, ids, strict=True):
        assert isinstance(pred, Prediction)
        assert list(pred.probs) == ["negative", "positive"] and sum(pred.probs.values()) == pytest.approx(1.0)
        assert pred.label == max(pred.probs, key=pred.probs.get)
        assert pred.tokens == tokenizer.tokens(row) and not pred.truncated and pred.attention is None
        with torch.no_grad():
            expected = analyzer.model(torch.tensor([row])).softmax(-1)[0].tolist()
        assert [pred.probs["negative"], pred.probs["positive"]] == pytest.approx(expected, abs=1e-5)


def test_classifier_input_handling(analyzer):
    with pytest.raises(ValueError, match="^empty text"):
        analyzer.classify(["fine", " "])
    short, long = analyzer.classify(["fine", "so so " * 2000])
    assert long.truncated and len(long.tokens) == SENTIMENT_META["max_len"] and not short.truncated
    assert len(analyzer.classify(ODD_TEXTS)) == len(ODD_TEXTS)


def test_classifier_attention_is_per_text_without_pads(analyzer):
    preds = analyzer.classify(["dull", REVIEWS[2]], attention=True)
    config = analyzer.model.config
    for pred in preds:
        n = len(pred.tokens)
        assert [w.shape for w in pred.attention] == [(config.n_heads, n, n)] * config.n_layers
        for w in pred.attention:
            np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)


def test_text_classifier_takes_probabilities_or_logits_from_any_function(tokenizer):
    seen = []

    def fixed_probs(ids, mask, need_weights):
        seen.append((ids.dtype, mask.dtype, ids.shape == mask.shape))
        return np.tile([[0.2, 0.8]], (len(ids), 1)), None

    preds = TextClassifier(fixed_probs, tokenizer, SENTIMENT_META, returns="probs").classify(REVIEWS[:2])
    assert [p.probs for p in preds] == [{"negative": 0.2, "positive": 0.8}] * 2
    assert seen == [(np.int64, np.bool_, True)]
    three = lambda ids, mask, need_weights: (np.zeros((len(ids), 3)), None)
    with pytest.raises(ValueError, match="3 scores per text but meta names 2 labels"):
        TextClassifier(three, tokenizer, SENTIMENT_META).classify(["fine"])


def test_sentiment_from_dir(tmp_path, tokenizer):
    model = tiny_classifier(vocab_size=tokenizer.vocab_size)
    tx.save_model_dir(tmp_path / "s", model, tokenizer_json(tokenizer, tmp_path), SENTIMENT_META)
    loaded = SentimentAnalyzer.from_dir(tmp_path / "s")
    direct = SentimentAnalyzer(model, tokenizer, SENTIMENT_META)
    assert [p.probs for p in loaded.classify(REVIEWS)] == [p.probs for p in direct.classify(REVIEWS)]
    with pytest.raises(tx.CheckpointError, match="seq2seq"):
        Translator.from_dir(tmp_path / "s")


def test_benchmark_reads_a_model_directory(tmp_path, tokenizer):
    from bench.decode import model_and_sources

    model = tiny_seq2seq(vocab_size=tokenizer.vocab_size)
    tx.save_model_dir(tmp_path / "m", model, tokenizer_json(tokenizer, tmp_path), TRANSLATE_META)
    model, sources = model_and_sources(str(tmp_path / "m"), n_sentences=20, seed=0)
    assert isinstance(model, tx.Seq2SeqTransformer) and len(sources) == 20
    assert all(s[0] == TO_EN and s[-1] == tokenizer.eos_id for s in sources)
