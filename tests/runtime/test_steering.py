"""Steering a translation (runtime.text, CTranslate2's option names): a forced target_prefix, num_hypotheses (the n
best), return_alternatives (the likeliest next tokens after the prefix, each completed) and word alignment, on the
tiny exported translator. Expected numbers come from the backend's own step() run by hand here, not from the
searches under test; runtime (onnxruntime) and tx (PyTorch) must give the same tokens in fp32."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import tiny_seq2seq
from decoding_fixtures import EosRamp, padded_batch
from export_fixtures import ENGLISH, GERMAN, exported

from runtime import OnnxTranslator
from runtime.alignment import AlignmentHeads, align, words
from runtime.decoding import BeamTree, beam_search
from tx.decoding import TorchBackend
from tx.inference import Translator

pytestmark = pytest.mark.exports

PREFIXES = ["The weather", "I", "Where is", "", "How much does"]  # one per GERMAN[:5] text


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
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


def forced_log_probs(translator, text: str, tokens: list[int], tgt_lang: str = "en") -> np.ndarray:
    """(len(tokens) + 1, V): log P(next | source, <s> + tokens[:t]) for every t, stepping the backend by hand
    with the given tokens (teacher forcing), one sentence alone."""
    src = np.array([translator.source_ids(text, tgt_lang)[0]], dtype=np.int64)
    state = translator.backend.encode(src, np.ones_like(src, dtype=bool))
    rows = []
    for token in [translator.tokenizer.bos_id] + tokens:
        log_probs, state = translator.backend.step(np.array([token], dtype=np.int64), state)
        rows.append(np.array(log_probs[0], dtype=np.float64))
    return np.stack(rows)


def gnmt(log_prob: float, length: int, alpha: float = 0.6) -> float:
    """GNMT's normalised score, written from its definition (Wu et al. 2016), not imported."""
    return log_prob / ((5 + length) / 6) ** alpha


# --- target_prefix ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["greedy", "beam", "sample"])
def test_a_forced_prefix_starts_the_output_with_the_models_own_probabilities(translator, method):
    out = translator.translate(GERMAN[:5], method=method, max_len=12, seed=1, target_prefix=PREFIXES)
    for text, prefix, t in zip(GERMAN[:5], PREFIXES, out, strict=True):
        ids = translator.tokenizer.encode(prefix) if prefix else []
        assert t.prefix_len == len(ids) and t.token_ids[:len(ids)] == ids
        forced = forced_log_probs(translator, text, t.token_ids)
        chosen = forced[np.arange(len(t.token_ids)), t.token_ids]  # the model's log-prob of each output token
        assert t.token_probs == pytest.approx(np.exp(chosen).tolist(), abs=1e-5)  # the prefix's too
        assert t.score == pytest.approx(gnmt(chosen.sum(), len(t.token_ids)), abs=1e-4)  # the prefix counts


def test_greedy_after_the_prefix_takes_the_most_probable_token_at_every_step(translator):
    out = translator.translate(GERMAN[:5], method="greedy", max_len=12, target_prefix=PREFIXES)
    for text, t in zip(GERMAN[:5], out, strict=True):
        forced = forced_log_probs(translator, text, t.token_ids)
        free = range(t.prefix_len, len(t.token_ids))
        assert [t.token_ids[i] for i in free] == [int(forced[i].argmax()) for i in free]
    # the prefixes really were forced: greedy alone starts otherwise for some text
    starts = [t.token_ids[0] for t in translator.translate(GERMAN[:5], method="greedy", max_len=12)]
    assert any(t.token_ids[0] != s for t, s in zip(out, starts, strict=True) if t.prefix_len)


def test_no_prefix_and_empty_prefixes_change_nothing(translator):
    plain = translator.translate(GERMAN[:3], method="beam", max_len=10)
    empty = translator.translate(GERMAN[:3], method="beam", max_len=10, target_prefix=["", None, "  "])
    assert [t.token_ids for t in empty] == [t.token_ids for t in plain]
    assert [t.prefix_len for t in empty] == [0, 0, 0]


# --- num_hypotheses --------------------------------------------------------------------------------------------


def test_n_best_are_sorted_distinct_scored_by_the_model_and_start_with_plain_beam(translator):
    n_best = translator.translate_n_best(GERMAN[:5], method="beam", beam=4, num_hypotheses=4, max_len=12)
    plain = translator.translate(GERMAN[:5], method="beam", beam=4, max_len=12)
    for text, hyps, best in zip(GERMAN[:5], n_best, plain, strict=True):
        assert len(hyps) == 4
        assert hyps[0].token_ids == best.token_ids and hyps[0].score == pytest.approx(best.score, abs=1e-6)
        scores = [h.score for h in hyps]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(h.token_ids) for h in hyps}) == len(hyps)
        for h in hyps:
            forced = forced_log_probs(translator, text, h.token_ids)
            assert h.score == pytest.approx(gnmt(forced[np.arange(len(h.token_ids)), h.token_ids].sum(),
                                                 len(h.token_ids)), abs=1e-4)


@pytest.mark.parametrize("beam", [4, 16])
def test_n_best_hypotheses_that_read_alike_are_merged_and_a_wider_search_fills_the_list(translator, monkeypatch, beam):
    """Token-distinct hypotheses can decode to one text ("▁me?" / "▁me ?"). Here the tokenizer is made to read only
    each output's first two tokens, so many hypotheses collide: every list must hold distinct texts, start with plain
    beam's translation and keep the best-scored hypothesis of each text the first search found; with room to widen
    (beam 4 -> 8) the wider search must add texts the first did not find; at the widest beam (16) nothing is
    added."""
    decode = translator.tokenizer.decode
    monkeypatch.setattr(translator.tokenizer, "decode", lambda ids, *a, **k: decode(list(ids)[:3], *a, **k))
    n = 4
    n_best = translator.translate_n_best(GERMAN[:3], method="beam", beam=beam, num_hypotheses=n, max_len=12)
    plain = translator.translate(GERMAN[:3], method="beam", beam=beam, max_len=12)
    first_search = []  # what the first search offers each text, alone (the search is batch-independent)
    for text in GERMAN[:3]:
        src = np.array([translator.source_ids(text, "en")[0]], dtype=np.int64)
        first_search += beam_search(translator.backend, src, np.ones_like(src, dtype=bool), max_len=12,
                                    bos_id=translator.tokenizer.bos_id, eos_id=translator.tokenizer.eos_id,
                                    beam=beam, num_hypotheses=n)
    collided = added = 0
    for hyps, best, offered in zip(n_best, plain, first_search, strict=True):
        texts = [h.text for h in hyps]
        assert len(set(texts)) == len(texts), texts
        assert hyps[0].token_ids == best.token_ids
        by_text: dict[str, list[int]] = {}
        for h in offered:  # best first: the first of each text is the one to keep
            by_text.setdefault(decode(h.tokens[:3]), h.tokens)
        collided += len(by_text) < len(offered)
        assert [h.token_ids for h in hyps[:len(by_text)]] == list(by_text.values())[:n]
        added += len(hyps) - min(len(by_text), n)
    assert collided, "the collapsing tokenizer made no two hypotheses alike: the test proves nothing"
    assert (added > 0) == (beam < 16), added


def offered_paths(tree: BeamTree, sentence: int) -> list[tuple[float, list[int]]]:
    """Every hypothesis the search offered for `sentence` (finished or at its max length), as (score, tokens),
    best first, read from the observer's records by following parent links: independent of how the search keeps
    its n best."""
    nodes = {r["id"]: r for r in tree.nodes() if r["sentence"] == sentence}
    out = []
    for record in nodes.values():
        if record["status"] in ("finished", "max_len"):
            tokens, node = [], record
            while node is not None:
                tokens.append(node["token"])
                node = nodes.get(node["parent"])
            out.append((record["score"], tokens[::-1]))
    return sorted(out, key=lambda x: -x[0])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_n_best_are_the_best_of_everything_the_search_offered(n):
    """A model whose EOS grows likelier every step, so hypotheses finish at many lengths (not in score order)."""
    backend = EosRamp(TorchBackend(tiny_seq2seq()), ramp=1.0)
    src, mask = padded_batch([5, 9, 3, 7], seed=4)
    tree = BeamTree()
    n_best = beam_search(backend, src, mask, max_len=10, beam=4, num_hypotheses=n, observer=tree)
    plain = beam_search(backend, src, mask, max_len=10, beam=4)
    for s, hyps in enumerate(n_best):
        offered = offered_paths(tree, s)
        assert len({len(tokens) for _, tokens in offered}) > 1  # they did finish at different lengths
        assert [h.tokens for h in hyps] == [tokens for _, tokens in offered[:n]]
        assert [h.score for h in hyps] == pytest.approx([score for score, _ in offered[:n]], abs=1e-5)
        assert hyps[0].tokens == plain[s].tokens


def test_n_best_with_a_prefix_all_start_with_it(translator):
    n_best = translator.translate_n_best(GERMAN[:2], method="beam", beam=3, num_hypotheses=3, max_len=10,
                                         target_prefix=["The weather is", "I"])
    for prefix, hyps in zip(["The weather is", "I"], n_best, strict=True):
        ids = translator.tokenizer.encode(prefix)
        assert hyps and all(h.token_ids[:len(ids)] == ids for h in hyps)


def test_samples_are_distinct_and_sorted(translator):
    [draws] = translator.translate_n_best(GERMAN[:1], method="sample", num_hypotheses=8, seed=5, max_len=8,
                                          temperature=1.5)
    assert 1 <= len(draws) <= 8 and len({tuple(d.token_ids) for d in draws}) == len(draws)
    assert [d.score for d in draws] == sorted((d.score for d in draws), reverse=True)


# --- return_alternatives ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_alternatives_are_the_top_k_after_the_prefix_each_completed(translator, method):
    k = 5
    results = translator.translate_n_best(GERMAN[:5], method=method, beam=2, max_len=12, target_prefix=PREFIXES,
                                          return_alternatives=True, num_hypotheses=k)
    for text, prefix, alternatives in zip(GERMAN[:5], PREFIXES, results, strict=True):
        ids = translator.tokenizer.encode(prefix) if prefix else []
        after = forced_log_probs(translator, text, ids)[-1]  # the step right after the prefix, by hand
        top = np.argsort(-after, kind="stable")[:k].tolist()
        assert [a.token_ids[len(ids)] for a in alternatives] == top
        assert [a.token_probs[a.prefix_len] for a in alternatives] == pytest.approx(np.exp(after[top]).tolist(),
                                                                                     abs=1e-5)
        assert all(a.prefix_len == len(ids) and a.token_ids[:len(ids)] == ids for a in alternatives)
        if method == "greedy":  # each completed greedily after its alternative
            for a in alternatives:
                forced = forced_log_probs(translator, text, a.token_ids)
                rest = range(len(ids) + 1, len(a.token_ids))
                assert [a.token_ids[i] for i in rest] == [int(forced[i].argmax()) for i in rest]


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_alternatives_without_a_prefix_are_taken_at_the_first_position(translator, method):
    """As CTranslate2's return_alternatives without a target_prefix: no prefix (none at all, or None for a text)
    means the first position, exactly as the prefix ""."""
    texts, kw = GERMAN[:2], dict(method=method, beam=2, max_len=10, return_alternatives=True, num_hypotheses=3)
    at_first = [[(a.token_ids, a.prefix_len) for a in alts]
                for alts in translator.translate_n_best(texts, target_prefix=["", ""], **kw)]
    for prefixes in (None, [None, ""], [None, None]):
        results = translator.translate_n_best(texts, target_prefix=prefixes, **kw)
        assert [[(a.token_ids, a.prefix_len) for a in alts] for alts in results] == at_first
    assert all(len(alts) == 3 and {p for _, p in alts} == {0} for alts in at_first)


def test_the_first_alternative_is_the_plain_greedy_translation(translator):
    [alternatives] = translator.translate_n_best([GERMAN[2]], method="greedy", max_len=12, target_prefix=[""],
                                                 return_alternatives=True, num_hypotheses=3)
    [plain] = translator.translate([GERMAN[2]], method="greedy", max_len=12)
    assert alternatives[0].token_ids == plain.token_ids


# --- alignment -------------------------------------------------------------------------------------------------


def test_words_join_pieces_and_leave_specials_out():
    tokens = ["<2en>", "▁The", "▁gar", "den", ".", "▁is", "▁", "</s>"]
    assert words(tokens) == [("The", [1]), ("garden.", [2, 3, 4]), ("is", [5])]


def test_align_takes_the_word_with_the_most_mass_from_the_chosen_heads():
    src = ["<2en>", "▁Der", "▁Gar", "ten", "</s>"]
    tgt = ["▁The", "▁garden", "</s>"]
    head0 = np.array([[.1, .6, .1, .1, .1], [.1, .1, .3, .4, .1], [0, 0, 0, 0, 1]])  # "garden" -> Gar+ten
    head1 = np.array([[.1, .1, .7, .0, .1], [.1, .7, .1, .0, .1], [0, 0, 0, 0, 1]])  # the opposite
    cross = [np.stack([head0, head1])]  # one layer, two heads: (H, T, S)
    first = align(cross, src, tgt, AlignmentHeads(0, 0, 0))
    assert (first.source_words, first.target_words, first.links) == (["Der", "Garten"], ["The", "garden"],
                                                                     [[0], [1]])
    assert first.weights[1] == pytest.approx([.1 / .8, .7 / .8])  # word mass over real words only
    assert align(cross, src, tgt, AlignmentHeads(0, 1, 0)).links == [[1], [0]]
    # shift 1: "The" reads row 1 (the step whose input it is); "garden" reads the </s> row, all mass on </s>: no link
    assert align(cross, src, tgt, AlignmentHeads(0, 0, 1)).links == [[1], []]


def test_translations_carry_one_alignment_entry_per_target_word(translator):
    out = translator.translate(GERMAN[:4], method="beam", max_len=10, alignment=True)
    for t in out:
        a = t.alignment
        assert a.target_words == [w for w, _ in words(t.tokens)]
        assert a.source_words == [w for w, _ in words(t.src_tokens)]
        assert len(a.links) == len(a.target_words) == a.weights.shape[0]
        assert all(len(link) <= 1 and all(0 <= j < len(a.source_words) for j in link) for link in a.links)
        assert t.attention is None  # alignment alone returns no maps
    [with_maps] = translator.translate(GERMAN[:1], method="beam", max_len=10, alignment=True, attention="cross")
    assert with_maps.alignment.links == align(with_maps.attention["cross"], with_maps.src_tokens,
                                              with_maps.tokens).links


# --- bad input -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kw, message", [
    (dict(target_prefix=["The weather is nice today and"]), "more than the room left.*at most 4 fit"),
    (dict(target_prefix=["a", "b"]), "target_prefix has 2 entries for 1 texts"),
    (dict(target_prefix="The"), "wrap the string in a list"),
    (dict(target_prefix=["x </s> y"]), "special token"),
    (dict(num_hypotheses=5, beam=4), r"between 1 and the beam \(4\), got 5"),
    (dict(num_hypotheses=0), r"between 1 and the beam \(4\), got 0"),
    (dict(num_hypotheses=2, method="greedy"), "greedy search finds one translation"),
    (dict(return_alternatives=True, target_prefix=[""], num_hypotheses=0), "alternatives.*between 1 and 32"),
])
def test_bad_steering_is_a_clear_error(translator, kw, message):
    with pytest.raises(ValueError, match=message):
        translator.translate_n_best([GERMAN[2]], max_len=5, **kw)


def test_a_prefix_in_a_script_the_model_never_read_is_translated_with_a_warning(translator):
    [t] = translator.translate([GERMAN[0]], method="greedy", max_len=8, target_prefix=["中文 日本語"])
    assert t.warning.startswith("The target prefix: This text is mostly outside what the model was trained on")
    [fine] = translator.translate([GERMAN[0]], method="greedy", max_len=8, target_prefix=["I"])
    assert fine.warning is None


def test_every_alternative_carries_its_own_texts_warning_and_source_tokens(translator):
    # the source's tokens and the warnings are computed once per text and shared by its alternatives
    texts, prefixes = [GERMAN[0], GERMAN[1], "🙂 🙂 🙂"], ["中文 日本語", "I", ""]
    results = translator.translate_n_best(texts, method="greedy", max_len=10, target_prefix=prefixes,
                                          return_alternatives=True, num_hypotheses=3)
    for text, prefix, alternatives in zip(texts, prefixes, results, strict=True):
        [alone] = translator.translate([text], method="greedy", max_len=10, target_prefix=[prefix])
        assert [(a.warning, a.src_tokens) for a in alternatives] == [(alone.warning, alone.src_tokens)] * 3
    assert results[0][0].warning.startswith("The target prefix: This text is mostly outside")
    assert results[1][0].warning is None
    assert results[2][0].warning.startswith("This text is mostly outside")
    results[0][0].src_tokens.append("changed")  # each translation owns its list
    assert results[0][1].src_tokens[-1] != "changed"


# --- determinism and parity ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kw", [
    dict(method="greedy", target_prefix=PREFIXES),
    dict(method="beam", num_hypotheses=3, target_prefix=PREFIXES),
    dict(method="greedy", return_alternatives=True, num_hypotheses=4, target_prefix=PREFIXES),
], ids=["prefix", "n-best", "alternatives"])
def test_a_texts_result_does_not_depend_on_its_batch_mates(translator, kw):
    together = translator.translate_n_best(GERMAN[:5], max_len=12, **kw)
    for i, text in enumerate(GERMAN[:5]):
        alone_kw = dict(kw, target_prefix=[kw["target_prefix"][i]])
        [alone] = translator.translate_n_best([text], max_len=12, **alone_kw)
        assert [t.token_ids for t in together[i]] == [t.token_ids for t in alone]


@pytest.mark.parametrize("kw", [
    dict(method="greedy", target_prefix=PREFIXES),
    dict(method="beam", num_hypotheses=3, target_prefix=PREFIXES),
    dict(method="beam", return_alternatives=True, num_hypotheses=4, target_prefix=PREFIXES),
], ids=["prefix", "n-best", "alternatives"])
def test_runtime_and_tx_give_the_same_steered_tokens(translator, reference, kw):
    ours = translator.translate_n_best(GERMAN[:5], max_len=12, **kw)
    theirs = reference.translate_n_best(GERMAN[:5], max_len=12, **kw)
    assert [[t.token_ids for t in n] for n in ours] == [[t.token_ids for t in n] for n in theirs]
    back = translator.translate(ENGLISH[:2], "en", "de", method="greedy", max_len=10, target_prefix=["Das", "Kann"])
    assert [t.token_ids for t in back] == [t.token_ids for t in reference.translate(
        ENGLISH[:2], "en", "de", method="greedy", max_len=10, target_prefix=["Das", "Kann"])]
