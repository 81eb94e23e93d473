"""The Decoding explorer's pure modules (playground/decoding: run, numbers, bars, figures, link) without Streamlit or a
model: the filters on stored log-probs, the page's words, the tree's returned path, the downloads, the URL."""
from __future__ import annotations

import io
import json
from html.parser import HTMLParser
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from playground import links
from playground.decoding import bars, figures, link, numbers
from playground.decoding.run import LENGTH_PENALTY, StepRecorder

DIRECTIONS = [("de", "en"), ("en", "de")]
LOG_PROBS = np.log(np.array([0.5, 0.25, 0.125, 0.0625, 0.0625], dtype=np.float32))  # one step over 5 tokens
VOCAB = ["a", "b", "c", "d", "e"]


def test_no_filter_keeps_the_models_distribution():
    probs, removed = numbers.filtered(LOG_PROBS, 1.0, 0, 1.0)
    np.testing.assert_allclose(probs, np.exp(LOG_PROBS), atol=1e-6)
    assert removed == 0.0
    assert numbers.removed_words(removed, 5, 5, 0, 1.0) == "No filter: all 5 tokens keep their probability."


def test_top_k_keeps_k_tokens_renormalised_and_says_what_it_removed():
    probs, removed = numbers.filtered(LOG_PROBS, 1.0, 2, 1.0)
    np.testing.assert_allclose(probs, [2 / 3, 1 / 3, 0, 0, 0], atol=1e-6)
    assert removed == pytest.approx(0.25)
    words = numbers.removed_words(removed, 2, 5, 2, 1.0)
    assert "removed 25.0% of the probability: 3 of 5 tokens dropped" in words and "the 2 kept" in words


def test_one_kept_token_is_named_in_the_singular():
    """Issue 34, 9: not "the 1 kept are renormalised"."""
    probs, removed = numbers.filtered(LOG_PROBS, 1.0, 1, 1.0)
    assert numbers.removed_words(removed, 1, 5, 1, 1.0) == (
        "Top-k and top-p removed 50.0% of the probability: 4 of 5 tokens dropped; the one token kept gets all of it "
        "(100%).")
    assert "1 of 2 token dropped; the 1 kept" not in numbers.removed_words(0.5, 1, 2, 1, 1.0)
    assert "1 of 2 token dropped" in numbers.removed_words(0.5, 1, 2, 1, 1.0)


@pytest.mark.parametrize("highest, top", [
    (0.024, 0.03),  # temperature 2's flat step: drawn on 0-3%, not as slivers on 0-100%
    (0.006, 0.006),
    (0.0013, 0.0015),
    (0.97, 1.0),
    (0.5, 0.6),
    (1.0, 1.0),
    (0.0, 1.0),  # nothing kept: the plain scale
])
def test_the_bars_scale_is_the_first_ladder_step_at_or_past_the_highest_bar(highest, top):
    assert bars.scale_top(highest) == pytest.approx(top)


@pytest.mark.parametrize("p, words", [(0.988, "98.8%"), (0.05, "5.0%"), (0.0021, "0.21%"), (8.5e-7, "0.000085%"),
                                      (1e-9, "< 0.000001%")])
def test_a_bar_says_its_probability_in_plain_decimals(p, words):
    assert bars.percent(p) == words


def parse_bars(markup: str) -> list[dict[str, str]]:
    """Each bar's data attributes and its cells' text, read back from the markup."""
    rows: list[dict[str, str]] = []

    class Rows(HTMLParser):
        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if "tx-bar" in (attrs.get("class") or "").split():
                rows.append({**attrs, "text": ""})
            elif rows:
                if "width:" in attrs.get("style", "") and "bar" not in rows[-1]:
                    rows[-1]["bar"] = attrs["style"]
                rows[-1].setdefault("title", attrs.get("title"))

        def handle_data(self, data):
            if rows:
                rows[-1]["text"] += data

    Rows().feed(markup)
    return rows


def test_the_bars_show_the_most_probable_kept_tokens_with_greedys_choice_in_red():
    probs, _ = numbers.filtered(LOG_PROBS, 1.0, 3, 1.0)
    top = bars.top_bars(probs, LOG_PROBS, VOCAB, 1)
    assert [b.label for b in top] == ["a (0)", "b (1)", "c (2)"]  # the filtered-out tokens get no bar
    assert [b.chosen for b in top] == [False, True, False]
    rows = parse_bars(bars.bars_html(top, "title"))
    assert [r["data-token-id"] for r in rows] == ["0", "1", "2"]
    assert [float(r["data-shown"]) for r in rows] == pytest.approx([4 / 7, 2 / 7, 1 / 7])
    assert [bars.GREEDY_COLOUR in r["bar"] for r in rows] == [False, True, False]
    assert "57.1%" in rows[0]["text"] and "a (0)" in rows[0]["text"]
    assert "width:95.24%" in rows[0]["bar"]  # 4/7 of a 0-60% scale


def test_the_bars_escape_every_token():
    """A vocabulary piece is text: markup in it is shown, never run (the bars are passed to st.markdown as HTML)."""
    vocab = ['<script>alert(1)</script>', '" onmouseover="x', "&amp;", "d", "e"]
    markup = bars.bars_html(bars.top_bars(np.exp(LOG_PROBS), LOG_PROBS, vocab, 0), "<b>title</b>")
    assert "<script>" not in markup and "<b>" not in markup and '" onmouseover="x' not in markup
    rows = parse_bars(markup)
    assert rows[0]["text"].startswith("<script>alert(1)</script> (0)")
    assert rows[1]["title"].startswith('" onmouseover="x (1): shown 25.0%')
    assert "&amp; (2)" in rows[2]["text"]


def test_the_bars_are_one_markdown_block():
    """No blank line: markdown would end the HTML block there and print the rest as text (a piece with line breaks
    in it too)."""
    markup = bars.bars_html(bars.top_bars(np.exp(LOG_PROBS), LOG_PROBS, ["a\n\nb", *VOCAB[1:]], 0), "title")
    assert "\n" not in markup and "a  b (0)" in parse_bars(markup)[0]["text"]


def test_temperature_flattens_and_top_p_cuts_the_tail():
    hot, _ = numbers.filtered(LOG_PROBS, 2.0, 0, 1.0)
    assert hot.max() < 0.5 and hot.sum() == pytest.approx(1.0)
    nucleus, removed = numbers.filtered(LOG_PROBS, 1.0, 0, 0.7)  # 0.5 + 0.25 reach 0.7
    assert np.count_nonzero(nucleus) == 2 and removed == pytest.approx(0.25)


def test_the_pages_words():
    title = numbers.step_title(3, 0.5, 0, 0.9)
    assert title == "Step 3: the next-token distribution (T = 0.5, top-k = off, top-p = 0.9)"
    words = numbers.chosen_words(["▁Good", "▁morning", "</s>"], 2, float(np.log(0.25)))
    assert words == "Generated so far: `<s> ▁Good` → greedy chooses **`▁morning`** (model probability 25.0%)."
    assert f"α = {LENGTH_PENALTY}" in numbers.tree_words(3) and "Beam size 3" in numbers.tree_words(3)
    assert "(T = 1.2, top-k = 7, top-p = 1) and seed 42." in numbers.compared_words(1.2, 7, 1.0, 42)


def test_the_comparison_table_has_a_row_per_method():
    outputs = {"greedy": SimpleNamespace(text="Hallo", score=-1.234567, confidence=0.5),
               "sampled": SimpleNamespace(text="Hi", score=-2.0, confidence=0.25)}
    assert numbers.compared_rows(outputs) == [
        {"method": "greedy", "translation": "Hallo", "score (normalised)": -1.2346, "confidence": "50.0%"},
        {"method": "sampled", "translation": "Hi", "score (normalised)": -2.0, "confidence": "25.0%"}]


def node(id_, parent, step, status="kept", best=False, piece="x"):
    return {"sentence": 0, "step": step, "id": id_, "parent": parent, "token": id_, "log_prob": -float(id_),
            "score": -float(id_), "status": status, "best": best, "piece": piece}


# a first step of two beams, a second where the second beam's child finishes and is returned
NODES = [node(0, None, 1, piece="A"), node(1, None, 1, piece="B"), node(2, None, 1, "pruned", piece="C"),
         node(3, 0, 2, piece="D"), node(4, 1, 2, "finished", best=True, piece="</s>"), node(5, 1, 2, "pruned")]


def test_the_best_path_follows_parents_from_the_node_marked_best():
    assert numbers.best_path(NODES) == [1, 4]


def test_the_tree_draws_the_returned_path_and_each_status_apart():
    fig = figures.tree_figure(NODES)
    (result,) = [t for t in fig.data if t.name == "the result"]
    assert list(result.text) == ["<s>", "B", "</s>"] and list(result.x) == [0, 1, 2]
    names = {t.name for t in fig.data}
    assert {figures.STATUS_WORDS[s] for s in ("kept", "finished", "pruned")} <= names
    assert figures.STATUS_WORDS["max_len"] not in names  # no node of that status: no legend entry


def test_the_downloads():
    table = pd.read_csv(io.BytesIO(numbers.distributions_csv(np.stack([LOG_PROBS, LOG_PROBS[::-1]]), VOCAB, 1.0, 2,
                                                             1.0, per_step=3)))
    assert list(table["step"]) == [1, 1, 1, 2, 2, 2]
    assert list(table["token"][:3]) == ["a", "b", "c"] and list(table["token"][3:]) == ["e", "d", "c"]
    assert table["prob_filtered"].iloc[2] == 0 and table["prob"].iloc[0] == pytest.approx(0.5)
    tree = json.loads(numbers.tree_json(NODES))
    assert tree == {"length_penalty": LENGTH_PENALTY, "nodes": NODES}


def test_a_link_round_trips_and_bad_values_are_corrected_and_named():
    state = {"direction": ("en", "de"), "text": "Guten Tag", "step": 2, "temperature": 0.5, "top_k": 7,
             "top_p": 0.9, "beam": 3}
    assert link.parse_url(link.url_of(state), DIRECTIONS) == (state, [])
    bad = {"direction": "xx-yy", "step": "0", "temperature": "nan", "top_k": "101", "top_p": "0.01", "beam": "x"}
    found, corrections = link.parse_url(bad, DIRECTIONS)
    assert found == {"step": 1, "top_k": 100, "top_p": 0.05}  # out of range: the nearest end; unparsable: default
    assert [(c.name, c.given, c.used) for c in corrections] == [
        ("direction", "xx-yy", "de-en"), ("step", "0", "1"), ("temperature", "nan", "1"), ("top_k", "101", "100"),
        ("top_p", "0.01", "0.05"), ("beam", "x", "4")]
    assert link.parse_url({"beam": "8", "top_k": "0"}, DIRECTIONS) == ({"beam": 8, "top_k": 0}, [])  # the ends


def test_a_link_carries_at_most_max_link_text_chars_of_text_and_says_so_when_it_cut():
    cap = links.MAX_LINK_TEXT_CHARS
    lines = "\n".join(["Der Hund schläft im Garten."] * 100)  # 2,799 characters of whole lines
    carried = link.url_of({"text": lines})["text"]
    assert len(carried) <= cap and lines.startswith(carried) and carried.endswith(".")  # whole lines only
    assert links.link_text_note(lines) is not None and links.link_text_note(carried) is None
    values, corrections = link.parse_url({"text": "x" * 30_000}, DIRECTIONS)
    assert values == {"text": "x" * cap}
    assert [(c.name, c.used) for c in corrections] == [("text", f"the text cut to {cap:,} characters")]


def test_a_correction_note_names_the_parameter_the_bad_value_and_what_was_used():
    assert links.note([]) is None
    said = links.note([links.Correction("layer", "99", "2", "is outside this model's layers 1–2"),
                       links.Correction("text", "`xx`" * 30, "the default", "is odd")])
    assert said == ("This link was corrected. `layer=99` is outside this model's layers 1–2: 2 is used instead. "
                    "`text=" + "x" * 40 + "…` is odd: the default is used instead.")
    assert links.in_range("beam", "0", 0, 1, 8) == (1, links.Correction("beam", "0", "1",
                                                                         "is outside the slider's range 1–8"))
    assert links.in_range("beam", "8", 8, 1, 8) == (8, None)


def test_the_step_recorder_passes_the_backend_through_and_keeps_row_0():
    log_probs = np.log(np.full((2, 4), 0.25, dtype=np.float32))
    log_probs[0] = np.log([0.7, 0.1, 0.1, 0.1])
    backend = SimpleNamespace(max_source_len=None, max_target_len=9, encode=None, reorder=None, top_k=None,
                              cross_attention=None, attention=None,
                              step=lambda tokens, state, attention: (log_probs, state + 1))
    recorder = StepRecorder(backend)
    out, state = recorder.step(np.array([1, 1]), 0)
    assert out is log_probs and state == 1 and recorder.max_target_len == 9
    out[0, 0] = 0.0  # the backend may reuse its buffer: the recorder kept a copy
    np.testing.assert_allclose(recorder.steps[0], np.log([0.7, 0.1, 0.1, 0.1]), atol=1e-6)
