"""The onnxruntime inference API (runtime/) on the tiny exported models: same answers as the
PyTorch wrappers, provider reporting on a CPU-only machine, clear load errors, thread safety,
and odd input text."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
from export_fixtures import ENGLISH, GERMAN, REVIEWS, exported, fresh_copy

import tx
from runtime import ModelLoadError, OnnxSentimentClassifier, OnnxTranslator, ProviderError, providers
from runtime.batching import pad
from runtime.decoding import beam_search, greedy
from runtime.providers import CPU, CUDA, create_session, shared_session
from tx.decoding import FullPrefixBackend, TorchBackend
from tx.inference import Prediction, SentimentAnalyzer, Translation, Translator
from tx.tokenizer import train_tokenizer

pytestmark = pytest.mark.exports

REVIEW_TEXTS = [text for _, text in REVIEWS]
ODD_TEXTS = ["😀🎉 great", "中文 日本語 한국어", "tab\tnull\x00bell\x07 esc\x1b[0m", "\u200b zero\u200bwidth",
             "ﬁ ligature Ⅻ", "\x00\x01\x02", "RTL \u202eevil\u202c text", "e\u0301\u0301\u0301 combining"]
LONG_TEXT = "Das Wetter ist heute schön. " * 400  # 11,200 characters


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """The PyTorch references run on tiny matrices: with 2 OpenMP threads on a busy 2-core machine each op
    can wait milliseconds for a preempted thread (measured 12 s vs 0.3 s for one beam search)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def translator() -> OnnxTranslator:
    return OnnxTranslator(exported("translate"), provider="cpu")


@pytest.fixture(scope="module")
def reference() -> Translator:
    return Translator.from_dir(exported("translate"))


@pytest.fixture(scope="module")
def classifier() -> OnnxSentimentClassifier:
    return OnnxSentimentClassifier(exported("sentiment"), provider="cpu")


@pytest.fixture(scope="module")
def analyzer() -> SentimentAnalyzer:
    return SentimentAnalyzer.from_dir(exported("sentiment"))


def assert_same_translations(got: list[Translation], want: list[Translation], atol: float = 1e-4) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, Translation)
        assert g.token_ids == w.token_ids and g.text == w.text and g.tokens == w.tokens
        assert g.src_tokens == w.src_tokens and g.truncated == w.truncated
        assert g.score == pytest.approx(w.score, abs=atol)


# --- same answers as PyTorch ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_translations_equal_pytorch(translator, reference, method):
    for src, tgt, texts in (("de", "en", GERMAN), ("en", "de", ENGLISH)):
        got = translator.translate(texts, src_lang=src, tgt_lang=tgt, method=method, beam=4)
        want = reference.translate(texts, src_lang=src, tgt_lang=tgt, method=method, beam=4)
        assert_same_translations(got, want)
        assert len({tuple(t.token_ids) for t in got}) > 1  # not all the same output: the sources matter


def source_batch(translator: OnnxTranslator, texts: list[str], tgt: str = "en") -> tuple[np.ndarray, np.ndarray]:
    """The padded (ids, mask) the text API builds for these texts."""
    return pad([translator.source_ids(text, tgt)[0] for text in texts], translator.tokenizer.pad_id)


@pytest.mark.parametrize("search, kw", [(greedy, {}), (beam_search, {"beam": 4, "length_penalty": 0.6}),
                                        (beam_search, {"beam": 3, "length_penalty": 1.0, "min_len": 3})])
def test_the_one_numpy_search_gives_the_same_hypotheses_on_every_backend(translator, reference, search, kw):
    """The searches are written once: over onnxruntime, over the PyTorch KV cache and over the full-prefix
    recompute (no cache) they must pick the same tokens in the same order, with the same finished flags."""
    src, mask = source_batch(translator, GERMAN)
    runs = {name: search(backend, src, mask, max_len=16, **kw) for name, backend in
            (("onnx", translator.backend), ("torch cache", TorchBackend(reference.model)),
             ("torch no cache", FullPrefixBackend(reference.model)))}
    for name, hyps in runs.items():
        assert [h.tokens for h in hyps] == [h.tokens for h in runs["onnx"]], name
        assert [h.finished for h in hyps] == [h.finished for h in runs["onnx"]], name
        for h, o in zip(hyps, runs["onnx"], strict=True):
            assert h.log_prob == pytest.approx(o.log_prob, abs=1e-3)
    assert len({tuple(h.tokens) for h in runs["onnx"]}) > 1


@pytest.mark.parametrize("search, kw", [(greedy, {}), (beam_search, {"beam": 4, "length_penalty": 0.6})])
def test_onnx_searches_batched_equal_one_by_one(translator, search, kw):
    src, mask = source_batch(translator, GERMAN)
    batched = search(translator.backend, src, mask, max_len=[5 + i for i in range(len(GERMAN))], **kw)
    for row, hyp in enumerate(batched):
        n = int(mask[row].sum())
        [alone] = search(translator.backend, src[row:row + 1, :n], mask[row:row + 1, :n], max_len=5 + row, **kw)
        assert (alone.tokens, alone.finished) == (hyp.tokens, hyp.finished)
        assert alone.score == pytest.approx(hyp.score, abs=1e-4)


def test_sampling_with_a_seed_equals_pytorch(translator, reference):
    for seed in (0, 1):
        got = translator.translate(GERMAN, method="sample", seed=seed, max_len=20, top_k=20, temperature=1.5)
        want = reference.translate(GERMAN, method="sample", seed=seed, max_len=20, top_k=20, temperature=1.5)
        assert_same_translations(got, want)


def test_io_binding_path_equals_plain_runs(reference):
    bound = OnnxTranslator(exported("translate"), provider="cpu", io_binding=True)
    assert bound.backend.binding
    for method in ("greedy", "beam"):
        assert_same_translations(bound.translate(GERMAN[:5], method=method, max_len=12),
                                 reference.translate(GERMAN[:5], method=method, max_len=12))


def test_translation_attention_equals_pytorch(translator, reference):
    got = translator.translate(GERMAN[:4], method="beam", max_len=10, attention="all")
    want = reference.translate(GERMAN[:4], method="beam", max_len=10, attention="all")
    for g, w in zip(got, want, strict=True):
        assert g.token_ids == w.token_ids
        s, t = len(g.src_tokens), len(g.tokens)
        for name, dims in (("encoder", (s, s)), ("self", (t, t)), ("cross", (t, s))):
            assert len(g.attention[name]) == len(w.attention[name]) == 2
            for a, b in zip(g.attention[name], w.attention[name], strict=True):
                assert a.shape == b.shape == (4, *dims)
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


def test_classifier_equals_pytorch(classifier, analyzer):
    got = classifier.classify(REVIEW_TEXTS, attention=True)
    want = analyzer.classify(REVIEW_TEXTS, attention=True)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, Prediction)
        assert g.label == w.label and g.tokens == w.tokens and not g.truncated
        assert list(g.probs) == ["negative", "positive"]
        for label in g.probs:
            assert g.probs[label] == pytest.approx(w.probs[label], abs=1e-5)
        for a, b in zip(g.attention, w.attention, strict=True):
            assert a.shape == b.shape == (2, len(g.tokens), len(g.tokens))
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    assert all(p.attention is None for p in classifier.classify(REVIEW_TEXTS))


def test_int8_runs_beam_search_with_attention_and_classifies(translator, classifier):
    int8 = OnnxTranslator(exported("translate"), provider="cpu", precision="int8")
    assert int8.precision == "int8" and int8.provider == CPU
    beams = int8.translate(GERMAN[:3], method="beam", max_len=8, attention="all")
    assert all(1 <= len(t.token_ids) <= 8 and t.attention["cross"][0].shape[-1] == len(t.src_tokens) for t in beams)
    int8_classifier = OnnxSentimentClassifier(exported("sentiment"), provider="cpu", precision="int8")
    got, want = int8_classifier.classify(REVIEW_TEXTS), classifier.classify(REVIEW_TEXTS)
    assert max(abs(g.probs[k] - w.probs[k]) for g, w in zip(got, want, strict=True) for k in g.probs) < 0.05
    # labels may differ only where fp32 itself is within that error of a tie
    assert all(g.label == w.label for g, w in zip(got, want, strict=True) if max(w.probs.values()) > 0.55)


# --- providers -----------------------------------------------------------------------------------------------------


def test_auto_reports_the_provider_that_really_runs():
    translator = OnnxTranslator(exported("translate"), provider="auto")
    classifier = OnnxSentimentClassifier(exported("sentiment"), provider="auto")
    for wrapper in (translator, classifier):
        handle = wrapper.backend.decoder if wrapper is translator else wrapper.lean
        assert wrapper.provider == handle.session.get_providers()[0]
        if wrapper.provider == CPU:  # this machine: CPU only
            assert wrapper.provider_note and "CUDA not used" in wrapper.provider_note
        else:
            assert wrapper.provider == CUDA and wrapper.provider_note is None


def test_cuda_where_it_cannot_run_is_a_clear_error():
    for make in (lambda: OnnxTranslator(exported("translate"), provider="cuda"),
                 lambda: OnnxSentimentClassifier(exported("sentiment"), provider="cuda")):
        try:
            wrapper = make()
        except ProviderError as e:
            message = str(e)
            assert message.startswith("CUDA was asked for, but ")
            assert len(message) > len("CUDA was asked for, but ") + 20  # onnxruntime's / the loader's reason
        else:  # a machine where CUDA does run
            assert wrapper.provider == CUDA


def test_silent_cuda_fallback_is_detected(monkeypatch):
    """onnxruntime-gpu asked for CUDA that cannot start logs and runs on CPU: the session is checked."""
    path = exported("sentiment") / "onnx" / "classifier.fp32.onnx"
    if providers.cuda_unavailable_reason() is None:
        pytest.skip("the CUDA provider library loads here")
    monkeypatch.setattr(providers, "cuda_unavailable_reason", lambda: None)  # pretend it loads
    handle = create_session(path, "auto")
    assert handle.provider == CPU and "could not start CUDA" in handle.note
    with pytest.raises(ProviderError, match="CUDA was asked for, but onnxruntime could not start CUDA"):
        create_session(path, "cuda")


@pytest.mark.parametrize("kwargs", [{"provider": "tpu"}, {"precision": "fp16"}, {"threads": 0}, {"threads": "2"}])
def test_bad_options_are_rejected(kwargs):
    for cls, task in ((OnnxTranslator, "translate"), (OnnxSentimentClassifier, "sentiment")):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            cls(exported(task), **kwargs)


def test_sessions_are_shared_and_threads_configurable():
    a = OnnxTranslator(exported("translate"), provider="cpu", threads=1)
    b = OnnxTranslator(exported("translate"), provider="cpu", threads=1)
    c = OnnxTranslator(exported("translate"), provider="cpu", threads=2)
    assert a.backend.decoder.session is b.backend.decoder.session
    assert a.backend.decoder.session is not c.backend.decoder.session
    assert a.backend.decoder.threads == 1 and c.threads == 2
    path = exported("translate") / "onnx" / "encoder.fp32.onnx"
    assert shared_session(path, "cpu", 1) is shared_session(path, "cpu", 1)


def test_idle_intra_op_threads_spin_briefly_then_sleep():
    """Unbounded spinning cost 26-29% under load and 1.6-3x on a quiet 2-core box; never spinning cost every op a
    wake-up; 100 µs measured best (export/providers.py)."""
    from runtime.providers import SPIN_US, session_options

    assert SPIN_US == 100
    for threads in (None, 1, 2):
        options = session_options(threads)
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "1"
        assert options.get_session_config_entry("session.intra_op.spin_duration_us") == "100"


def test_the_environment_names_the_threads_where_the_caller_does_not(monkeypatch):
    """TX_ORT_THREADS: the intra-op threads of a session that names none (the suite runs 1: tests/conftest.py);
    threads the caller names win; unset or empty, onnxruntime's default; anything but a whole number >= 1 is
    refused, naming the variable."""
    from runtime.providers import THREADS_ENV, session_options

    monkeypatch.setenv(THREADS_ENV, "3")
    assert session_options(None).intra_op_num_threads == 3
    assert session_options(2).intra_op_num_threads == 2
    for unset in ("", "  "):
        monkeypatch.setenv(THREADS_ENV, unset)
        assert session_options(None).intra_op_num_threads == 0  # onnxruntime's own default
    monkeypatch.delenv(THREADS_ENV)
    assert session_options(None).intra_op_num_threads == 0
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(ValueError, match=THREADS_ENV):
            session_options(None)


# --- load errors ---------------------------------------------------------------------------------------------------


def expect_load_error(make, *fragments: str) -> str:
    with pytest.raises(ModelLoadError) as info:
        make()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert isinstance(info.value, tx.CheckpointError) and isinstance(info.value, ValueError)
    return message


def test_missing_onnx_file():
    model_dir = fresh_copy("translate", "missing")
    (model_dir / "onnx" / "decoder.fp32.onnx").unlink()
    expect_load_error(lambda: OnnxTranslator(model_dir, provider="cpu"),
                      str(model_dir / "onnx" / "decoder.fp32.onnx"), "not found", f"python -m export {model_dir}")
    classifier_dir = fresh_copy("sentiment", "missing-int8")
    (classifier_dir / "onnx" / "classifier.int8.onnx").unlink()
    expect_load_error(lambda: OnnxSentimentClassifier(classifier_dir, provider="cpu", precision="int8"),
                      "classifier.int8.onnx", "not found")
    OnnxSentimentClassifier(classifier_dir, provider="cpu")  # fp32 is still there


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_corrupt_onnx_file(damage):
    model_dir = fresh_copy("translate", f"corrupt-{damage}")
    path = model_dir / "onnx" / "encoder.fp32.onnx"
    data = path.read_bytes()
    path.write_bytes({"garbage": b"this is not an ONNX model\n" * 10, "truncated": data[: len(data) // 2],
                      "empty": b""}[damage])
    expect_load_error(lambda: OnnxTranslator(model_dir, provider="cpu"), str(path), "onnxruntime cannot load it",
                      "re-export")


def test_onnx_file_of_another_graph():
    model_dir = fresh_copy("translate", "swapped")
    onnx_dir = model_dir / "onnx"
    (onnx_dir / "decoder.fp32.onnx").write_bytes((onnx_dir / "encoder.fp32.onnx").read_bytes())
    expect_load_error(lambda: OnnxTranslator(model_dir, provider="cpu"), "decoder.fp32.onnx",
                      "not the export of", "'encoder'")
    (onnx_dir / "decoder.int8.onnx").write_bytes((onnx_dir / "decoder.fp32.onnx").read_bytes())
    expect_load_error(lambda: OnnxTranslator(model_dir, provider="cpu", precision="int8"), "decoder.int8.onnx")


def test_tokenizer_that_does_not_match():
    model_dir = fresh_copy("sentiment", "other-tokenizer")
    bigger = train_tokenizer([f"word{i} " * 3 for i in range(400)], vocab_size=400, min_frequency=1)
    assert bigger.vocab_size > 120
    bigger.save(model_dir / "tokenizer.json")
    expect_load_error(lambda: OnnxSentimentClassifier(model_dir, provider="cpu"),
                      str(model_dir / "tokenizer.json"), "does not belong to this model", "restore the model's own")
    same_size = train_tokenizer(REVIEW_TEXTS * 3 + ["zzz yyy xxx"] * 3, vocab_size=120, min_frequency=1)
    same_size.save(model_dir / "tokenizer.json")  # fits the embedding, but is not the exported one
    expect_load_error(lambda: OnnxSentimentClassifier(model_dir, provider="cpu"), "tokenizer.json",
                      "changed since the ONNX export", "restore the model's own tokenizer.json")
    (model_dir / "tokenizer.json").write_text("{broken", encoding="utf-8")
    expect_load_error(lambda: OnnxSentimentClassifier(model_dir, provider="cpu"), "tokenizer.json",
                      "cannot load the tokenizer", "git checkout -- ")


def test_model_dir_of_the_other_task(tmp_path):
    expect_load_error(lambda: OnnxTranslator(exported("sentiment"), provider="cpu"),
                      str(exported("sentiment")), "classifier model", "OnnxSentimentClassifier")
    expect_load_error(lambda: OnnxSentimentClassifier(exported("translate"), provider="cpu"),
                      str(exported("translate")), "seq2seq model", "OnnxTranslator")
    expect_load_error(lambda: OnnxTranslator(tmp_path / "nowhere", provider="cpu"), "config.json", "not found")


# --- threads -------------------------------------------------------------------------------------------------------


def run_threads(call, n_threads: int = 8, calls: int = 50) -> list[list]:
    """call(thread, i) from n_threads threads at once, `calls` times each; results per thread, in order."""
    start = threading.Barrier(n_threads)

    def worker(thread: int) -> list:
        start.wait()
        return [call(thread, i) for i in range(calls)]

    with ThreadPoolExecutor(n_threads) as pool:
        return list(pool.map(worker, range(n_threads)))


def test_eight_threads_share_one_translator(translator):
    texts = GERMAN + ENGLISH
    expected = {text: translator.translate([text], method="greedy", max_len=8)[0].token_ids for text in texts}
    sessions = {id(translator.backend.encoder.session), id(translator.backend.decoder.session)}
    results = run_threads(lambda t, i: translator.translate([texts[(t + i) % len(texts)]], method="greedy",
                                                            max_len=8)[0].token_ids)
    for t, outputs in enumerate(results):
        assert outputs == [expected[texts[(t + i) % len(texts)]] for i in range(50)]
    assert {id(translator.backend.encoder.session), id(translator.backend.decoder.session)} == sessions


def test_eight_threads_share_one_session_bitwise(classifier):
    rng = np.random.default_rng(0)
    feeds = [{"input_ids": rng.integers(6, 120, size=(2, 5 + n % 7)), "attention_mask": np.ones((2, 5 + n % 7), bool)}
             for n in range(10)]
    session = classifier.lean.session
    expected = [session.run(["logits"], f)[0] for f in feeds]
    results = run_threads(lambda t, i: session.run(["logits"], feeds[(t * 3 + i) % 10])[0])
    for t, outputs in enumerate(results):
        for i, got in enumerate(outputs):
            assert np.array_equal(got, expected[(t * 3 + i) % 10])  # identical, not merely close


# --- odd input -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", "   ", " \t\n ", "\n"])
def test_empty_and_whitespace_text_is_a_value_error(translator, classifier, bad):
    with pytest.raises(ValueError, match="empty text"):
        translator.translate([bad])
    with pytest.raises(ValueError, match="empty text"):
        translator.translate(["Guten Morgen", bad], method="greedy")
    with pytest.raises(ValueError, match="empty text"):
        classifier.classify([bad])


def test_ten_thousand_characters_are_truncated_and_flagged(translator, classifier):
    assert len(LONG_TEXT) > 10_000
    [t] = translator.translate([LONG_TEXT], method="greedy", max_len=5)
    assert t.truncated and len(t.src_tokens) == translator.max_src_len and t.src_tokens[-1] == "</s>"
    [beam] = translator.translate([LONG_TEXT, "Guten Morgen"], method="beam", max_len=5)[:1]
    assert beam.truncated
    [p] = classifier.classify([LONG_TEXT])
    assert p.truncated and len(p.tokens) == classifier.max_len
    [short] = classifier.classify([REVIEW_TEXTS[0]])
    assert not short.truncated


def test_emoji_cjk_and_control_characters_never_crash(translator, reference, classifier, analyzer):
    for method in ("greedy", "beam"):
        got = translator.translate(ODD_TEXTS, method=method, max_len=6, attention="all")
        assert_same_translations(got, reference.translate(ODD_TEXTS, method=method, max_len=6, attention="all"))
        for t in got:
            assert t.src_tokens[0] == "<2en>" and t.src_tokens[-1] == "</s>" and 1 <= len(t.token_ids) <= 6
            assert all(np.isfinite(w).all() for ws in t.attention.values() for w in ws)
    predictions = classifier.classify(ODD_TEXTS, attention=True)
    for got, want in zip(predictions, analyzer.classify(ODD_TEXTS), strict=True):
        assert got.label == want.label and sum(got.probs.values()) == pytest.approx(1.0)
        assert all(np.isfinite(v) for v in got.probs.values())
        assert all(np.isfinite(w).all() for w in got.attention)


def teacher_forced(translator: OnnxTranslator, text: str, src: str, tgt: str, tokens: list[int]) -> np.ndarray:
    """The log-probs (T, V) the translator's decoder gives at each step when fed <s> + tokens[:-1]."""
    ids, _ = translator.source_ids(text, tgt)
    backend = translator.backend
    state = backend.encode(np.array([ids]), np.ones((1, len(ids)), dtype=bool))
    rows = []
    for token in [translator.tokenizer.bos_id, *tokens[:-1]]:
        log_probs, state = backend.step(np.array([token]), state)
        rows.append(log_probs[0])
    return np.stack(rows)


@pytest.mark.parametrize("src, tgt, texts", [("de", "en", GERMAN), ("en", "de", ENGLISH)])
def test_int8_follows_fp32_until_its_error_could_flip_a_token(translator, src, tgt, texts):
    """Properties that hold for any faithful int8 graph, not a share measured on random weights: int8's
    log-probs stay within 0.5 nats of fp32's (7-bit weights without saturation are ~0.1; an overflowing 8-bit
    scheme was >> 1), and int8's greedy output equals fp32's at least up to the first step where fp32's
    top-1 margin is smaller than twice int8's measured error (before it, no error of that size can change
    the choice, so a difference there is a bug in the int8 search, not quantisation)."""
    int8 = OnnxTranslator(exported("translate"), provider="cpu", precision="int8")
    for text in texts:  # one by one: int8 activations are quantised per batch, so a batch could differ
        [want] = translator.translate([text], src, tgt, method="greedy")
        [got] = int8.translate([text], src, tgt, method="greedy")
        fp32_steps = teacher_forced(translator, text, src, tgt, want.token_ids)
        int8_steps = teacher_forced(int8, text, src, tgt, want.token_ids)
        error = np.abs(int8_steps - fp32_steps).max(axis=-1)  # (T,)
        assert error.max() < 0.5, f"{text!r}: int8 log-probs off by {error.max():.3f} nats"
        top2 = np.sort(fp32_steps, axis=-1)[:, -2:]
        safe = top2[:, 1] - top2[:, 0] > 2 * error
        first_unsafe = int(np.argmin(safe)) if not safe.all() else len(safe)
        assert got.token_ids[:first_unsafe] == want.token_ids[:first_unsafe], text
        if first_unsafe == len(safe):
            assert got.token_ids == want.token_ids, text


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_cross_attention_from_the_search_equals_the_explain_pass(translator, method):
    """attention="cross" (what the Translate page asks for: one search, no second pass) gives the same maps as
    the teacher-forced explain graphs, and the same text, confidence and maps as PyTorch."""
    recorded = translator.translate(GERMAN[:4], method=method, max_len=12, attention="cross")
    explained = translator.translate(GERMAN[:4], method=method, max_len=12, attention="all")
    reference = Translator.from_dir(exported("translate")).translate(GERMAN[:4], method=method, max_len=12,
                                                                     attention="cross")
    for got, want, ref in zip(recorded, explained, reference, strict=True):
        assert got.token_ids == want.token_ids == ref.token_ids
        assert set(got.attention) == {"encoder", "self", "cross"} and got.attention["encoder"] is None \
            and got.attention["self"] is None  # the same keys whatever is asked; only "cross" recorded
        for a, b, c in zip(got.attention["cross"], want.attention["cross"], ref.attention["cross"], strict=True):
            assert a.shape == b.shape == (4, len(got.tokens), len(got.src_tokens))
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
            np.testing.assert_allclose(a, c, rtol=0, atol=1e-5)
        assert 0 < got.confidence <= 1 and len(got.token_probs) == len(got.tokens)
        assert got.confidence == pytest.approx(float(np.exp(np.mean(np.log(got.token_probs)))), rel=1e-6)
        assert got.confidence == pytest.approx(ref.confidence, abs=1e-4)


def test_beam_trace_on_the_onnx_backend_changes_nothing_and_its_best_path_is_the_result(translator):
    from decoding_fixtures import check_trace

    sources = [translator.source_ids(text, "en")[0] for text in GERMAN[:3]]
    src, mask = pad(sources, translator.tokenizer.pad_id)
    check_trace(translator.backend, src, mask, max_len=[8, 12, 20], beam=4, length_penalty=0.6,
                bos_id=translator.tokenizer.bos_id, eos_id=translator.tokenizer.eos_id)
