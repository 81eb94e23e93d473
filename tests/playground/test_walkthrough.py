"""The Walkthrough's pure modules (playground/walkthrough: steps, tensors, figures) without Streamlit or a model: the
steps and models offered, the page's URL, what a step's statistics and downloads are made of, its heatmaps."""
from __future__ import annotations

import csv
import html
import io
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from playground.walkthrough import figures, steps, tensors
from runtime.decoding import softmax
from runtime.walkthrough import ClassificationTrace, TranslationTrace

TOKENIZER = SimpleNamespace(id_to_token=lambda i: f"t{i}")


def translation_trace() -> TranslationTrace:
    layers, heads, src, tgt = 2, 2, 3, 2
    rng = np.random.default_rng(0)
    return TranslationTrace(src_ids=[5, 6, 2], src_pieces=["<2en>", "▁Hallo", "</s>"], output_ids=[7, 2],
                            output_pieces=["▁Hello", "</s>"], tgt_in_ids=[1, 7], text="Hello", truncated=False,
                            warning=None, encoder={"enc_self_q": rng.normal(size=(layers, heads, src, 4))},
                            decoder={"dec_self_q": rng.normal(size=(layers, heads, tgt, 4)),
                                     "dec_cross_weights": rng.random(size=(layers, heads, tgt, src))})


def test_the_steps_of_each_model():
    assert [s.key for s in steps.steps_for("sentiment")][-2:] == ["pool", "head"]
    translator = steps.steps_for("translate:de-en")
    assert translator[:len(steps.ENCODER_STEPS)] == steps.ENCODER_STEPS and translator[-1].key == "output"
    assert steps.direction_of("translate:en-de") == ("en", "de")
    assert steps.offered([("de", "en")]) == ["translate:de-en", "sentiment"]  # only the translator's own directions


def test_a_link_round_trips_and_malformed_values_are_corrected_and_named():
    state = {"model": "translate:en-de", "text": "Good morning", "step": "dec_cross", "layer": 2, "head": 3,
             "query": 0, "position": 4}
    assert steps.parse_url(steps.url_of(state)) == (state, [])
    found, corrections = steps.parse_url({"model": "klingon", "step": "nope", "layer": "0", "head": "-1",
                                          "query": "x", "text": " "})
    assert found == {}
    assert [(c.name, c.given, c.used) for c in corrections] == [
        ("model", "klingon", "translate:de-en"), ("step", "nope", "the first step"), ("layer", "0", "layer 1"),
        ("head", "-1", "head 1"), ("query", "x", "row 0")]
    found, (long_text,) = steps.parse_url({"text": "x" * 2500, "position": "0"})
    assert found == {"text": "x" * 2000, "position": 0}
    assert (long_text.name, long_text.used) == ("text", "its first 2000 characters")
    assert steps.url_of({"model": "sentiment", "text": "", "layer": None, "step": "pool"}) == {
        "model": "sentiment", "step": "pool"}


def test_stages_tokens_and_sublayers_of_a_translation():
    trace = translation_trace()
    assert tensors.tokens_of(trace, "enc") == ["<2en>", "▁Hallo", "</s>"]
    assert tensors.tokens_of(trace, "dec") == ["<s>", "▁Hello"]  # the decoder reads <s> + output[:-1]
    assert tensors.stage(trace, "dec") is trace.decoder
    parts = tensors.sublayer(trace.decoder, "dec_cross", 1)
    assert list(parts) == ["weights"] and parts["weights"].shape == (2, 2, 3)
    np.testing.assert_array_equal(parts["weights"], trace.decoder["dec_cross_weights"][1])
    dec_cross = next(s for s in steps.DECODER_STEPS if s.key == "dec_cross")
    assert tensors.attention_prefix(dec_cross) == "dec_cross" and tensors.ffn_prefix(dec_cross) == "dec_ff"


def test_a_classifier_trace_has_one_stage():
    trace = ClassificationTrace(ids=[3, 4], pieces=["▁a", "▁b"], labels=["neg", "pos"], truncated=False,
                                warning=None, steps={"encoded": np.zeros((2, 4))})
    assert tensors.stage(trace, "dec") is trace.steps and tensors.tokens_of(trace, "dec") == ["▁a", "▁b"]


def test_layer_norm_and_relu_statistics():
    before, after = np.array([[1.0, 3.0], [0.0, 0.0]]), np.array([[-1.0, 1.0], [0.0, 0.0]])
    (first, second) = tensors.layer_norm_stats(before, after)
    assert first == {"position": 0, "mean before": 2.0, "std before": 1.0, "mean after": 0.0, "std after": 1.0}
    assert second["position"] == 1
    np.testing.assert_allclose(tensors.relu_zero_share(np.array([[0.0, 1.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]])),
                               [0.5, 0.0])
    np.testing.assert_allclose(tensors.norm_rows(np.array([[3.0, 4.0]])), [5.0])


def test_the_softmax_check_sees_weights_that_do_not_come_from_the_scores():
    masked = np.array([[0.5, -np.inf], [1.0, 2.0], [-np.inf, -np.inf]])
    weights = np.vstack([softmax(masked[:2]), np.zeros((1, 2))])  # a row masked everywhere: weights 0 in the model
    assert tensors.softmax_check(masked, weights) < 1e-7
    weights[1] = [0.5, 0.5]
    assert tensors.softmax_check(masked, weights) > 0.2
    assert tensors.softmax_check(np.full((2, 2), -np.inf), np.zeros((2, 2))) == 0.0


def test_the_candidates_and_the_whole_distribution():
    log_probs = np.log(np.array([0.1, 0.6, 0.3]))
    top = tensors.top_candidates(log_probs, TOKENIZER, k=2)
    assert [(c["rank"], c["token"], c["id"]) for c in top] == [(1, "t1", 1), (2, "t2", 2)]
    assert top[0]["probability"] == pytest.approx(0.6)
    rows = list(csv.reader(io.StringIO(tensors.full_distribution_csv(log_probs, np.array([1.0, 2.5, 2.0]),
                                                                     TOKENIZER))))
    assert rows[0] == ["rank", "id", "token", "logit", "probability"]
    assert rows[1] == ["1", "1", "t1", "2.5", "0.6"] and len(rows) == 4


def test_the_step_downloads():
    rows = list(csv.reader(io.StringIO(tensors.matrix_csv(np.array([[1.0, 2.0]]), ["▁a"], ["x", "y"]))))
    assert rows == [["row", "x", "y"], ["▁a", "1", "2"]]
    body = json.loads(tensors.step_json({"masked": np.array([0.5, -np.inf]), "ids": np.array([3, 4])},
                                        {"rows": ["a", "b"]}))
    assert body == {"tokens": {"rows": ["a", "b"]}, "arrays": {"masked": [0.5, None], "ids": [3, 4]}}


def test_a_heatmap_blanks_and_names_masked_cells():
    figure = figures.values_map(np.array([[1.0, -np.inf], [-2.0, 0.5]]), ["<s>", "▁a"], "title", "key",
                                x_labels=["x", "y"])
    (trace,) = figure["data"]
    assert np.isnan(trace["z"][0, 1]) and trace["z"][1, 0] == -2.0
    assert trace["customdata"][0][1] == "0: &lt;s&gt; · y · −∞ (masked)" and "masked" not in trace["customdata"][1][1]
    assert (trace["zmin"], trace["zmax"]) == (-2.0, 2.0)  # a diverging scale centred on 0
    plain = figures.values_map(np.ones((1, 2)), ["a"], "t", "d", diverging=False)["data"][0]
    assert "zmin" not in plain and plain["colorscale"] == "Blues"
    assert figures.shape_line(Q=np.zeros((2, 3)), K=np.zeros(4)) == "Q (2, 3) · K (4,)"


def lengths(*norms: float, width: int = 8) -> np.ndarray:
    """One row per token, each as long as given (all its length on the first dimension)."""
    rows = np.zeros((len(norms), width), dtype=np.float32)
    rows[:, 0] = norms
    return rows


def test_the_embedding_words_follow_the_numbers_of_the_model_shown():
    """Issue 34, 7: the lengths the issue measured on the shipped models. The translator (d_model 512): scaled rows
    15.8–24.4 against the encoding's 16 (unscaled 0.70–1.08); the classifier (d_model 64): 0.72–1.03 against
    5.66, the encoding dominating."""
    translator = tensors.embedding_words(lengths(0.70, 1.08), lengths(15.8, 24.4), lengths(16.0, 16.0))
    assert translator.startswith("Here the rows × √d_model are 15.80–24.40 long against the positional "
                                 "encoding's 16.00: **about the same size**")
    assert "without the scaling, at 0.70–1.08, the rows would be drowned by the encoding" in translator
    classifier = tensors.embedding_words(lengths(0.09, 0.13), lengths(0.72, 1.03), lengths(5.66, 5.66))
    assert "0.72–1.03 long against the positional encoding's 5.66: **the encoding dominates**" in classifier
    assert "drowned" not in classifier and "same size" not in classifier
    rows_win = tensors.embedding_words(lengths(1.0), lengths(40.0), lengths(16.0))
    assert "**the token's row dominates**" in rows_win
    assert "no positional encoding" in tensors.embedding_words(lengths(1.0), lengths(8.0), lengths(0.0))


def sinusoid(positions: int, d_model: int) -> np.ndarray:
    """The paper's positional encoding (§3.5), written out here."""
    pos = np.arange(positions)[:, None]
    angle = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    table = np.zeros((positions, d_model))
    table[:, 0::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    return table


@pytest.mark.parametrize("name, key, verdict", [("translate", "src_embed.table.weight", "about the same size"),
                                                ("sentiment", "embed.table.weight", "the encoding dominates")])
def test_the_shipped_models_embedding_words(name, key, verdict):
    """The same words from the shipped weights: rows of 20 ordinary tokens, the paper's encoding at 20 positions."""
    torch = pytest.importorskip("torch")
    folder = Path(__file__).resolve().parents[2] / "models" / name
    table = torch.load(folder / "model.pt", map_location="cpu", weights_only=True)[key].numpy()
    d_model = table.shape[1]
    rows = table[100:120]
    words = tensors.embedding_words(rows, rows * d_model**0.5, sinusoid(20, d_model))
    assert f"**{verdict}**" in words


def test_a_map_of_128_keys_labels_every_kth_key_and_hover_keeps_each():
    """Issue 34, 9: 128 key labels in a half-width map smeared into one line."""
    keys = [f"k{j}" for j in range(128)]
    fig = figures.values_map(np.zeros((128, 128)), keys, "scores", "key", x_labels=keys, most=figures.HALF_LABELS)
    x, y = fig["layout"]["xaxis"], fig["layout"]["yaxis"]
    assert x["tickvals"] == list(range(0, 128, 7)) and x["ticktext"] == [f"k{j}" for j in range(0, 128, 7)]
    assert x["title"]["text"] == "key (every 7th token labelled; hover shows each)"
    assert y["tickvals"] == list(range(0, 128, 4)) and len(y["ticktext"]) == 32  # rows: at most 40 labels
    assert fig["data"][0]["customdata"][127][127].endswith("k127")
    short = figures.values_map(np.zeros((3, 3)), keys[:3], "scores", "key", x_labels=keys[:3])
    assert short["layout"]["xaxis"]["ticktext"] == keys[:3] and short["layout"]["xaxis"]["title"]["text"] == "key"


def test_a_half_width_softmax_maps_subtitle_is_wrapped_and_given_room():
    """Issue 34, 9: the marker note under the softmax map's title ran off its half-width column."""
    from playground.figures import heatmap

    tokens = ["<2en>", "▁Guten", "<unk>", "</s>"]
    fig = heatmap(np.full((4, 4), 0.25), tokens, tokens, "softmax: the attention weights", "key", "query",
                  note_chars=figures.HALF_NOTE_CHARS)
    title = fig["layout"]["title"]["text"]
    first, *notes = title.split("<br>")
    assert first == "softmax: the attention weights" and len(notes) >= 3
    shown = [html.unescape(n.removeprefix("<sup>").removesuffix("</sup>")) for n in notes]
    assert all(len(line) <= figures.HALF_NOTE_CHARS for line in shown), shown
    assert " ".join(shown).startswith("Tokens: ▁ starts a word; <2en>/<2de> is the tag")
    assert fig["layout"]["margin"]["t"] == 40 + 18 * (1 + len(notes))
