"""The Walkthrough page (issue 23, part 1) on the tiny exported test models (tests/app_fixtures.py): every step of
both models renders from the walkthrough graphs' numbers, a redraw does not run the model again, the page's state
travels in the URL, and bad input and missing graphs get clear messages."""
from __future__ import annotations

import base64
import json
import re
import shutil
from urllib.parse import parse_qs

import numpy as np
import pyarrow as pa
import pytest
from app_fixtures import app_models_root, clean, open_app, read_heatmap, values
from streamlit.testing.v1 import AppTest

from playground.walkthrough import steps as wt
from runtime.walkthrough import TranslationWalkthrough

pytestmark = pytest.mark.exports

PAGE = "pages/8_Walkthrough.py"
WEIGHTS, MASKED, RAW = ("softmax: the attention weights", "÷ √d_k, mask applied (blank = −∞)",
                        "QKᵀ: raw scores (query row × key column)")  # the scores step's maps (attention.py)


@pytest.fixture
def walkthrough_page(monkeypatch):
    def open_(params: dict[str, str] | None = None, root=None) -> AppTest:
        return open_app(monkeypatch, root or app_models_root(), PAGE, params)

    return open_


def figure(at: AppTest, key: str) -> dict:
    chart = next(c for c in at.get("plotly_chart") if f"walkthrough_{key}" in c.proto.id)
    return json.loads(chart.proto.spec)


def heat(at: AppTest, key: str, title: str | None = None) -> np.ndarray:
    """A heatmap's z as sent to the browser (plotly encodes numpy arrays as base64 typed arrays); or, where the page
    drew the map as markup (at most 40 tokens a side, playground/heatmap_markup.py), the values its cells' hovers
    say (a masked cell: −inf where plotly's is NaN), found by its `title`."""
    markup = [read_heatmap(m.value) for m in at.markdown if 'class="tx-heat"' in m.value]
    found = [shown["z"] for shown in markup if shown["title"] == title]
    if title is not None and found:
        return found[0]
    z = figure(at, key)["data"][0]["z"]
    if isinstance(z, dict):
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(
            [int(n) for n in str(z["shape"]).split(",")])
    return np.array(z, dtype=np.float32)


@pytest.mark.parametrize("choice", wt.MODEL_CHOICES)
def test_every_step_renders_for_every_model(walkthrough_page, choice):
    at = walkthrough_page({"model": choice})
    clean(at)
    steps = at.selectbox(key="walkthrough_step").options
    assert len(steps) == len(wt.steps_for(choice))
    for number in range(len(steps)):
        if number:
            at.button(key="walkthrough_next").click().run()
        clean(at)
        assert at.selectbox(key="walkthrough_step").value == wt.steps_for(choice)[number].key
        assert at.get("latex"), "every step names its formula"
        if wt.steps_for(choice)[number].kind == "embedding":  # the words follow this model's lengths (issue 34, 7)
            assert any(m.value.startswith("Here the rows × √d_model are") for m in at.markdown)
    at.button(key="walkthrough_back").click().run()
    assert at.selectbox(key="walkthrough_step").value == wt.steps_for(choice)[-2].key


def test_the_scores_step_shows_the_graphs_numbers_and_a_redraw_does_not_run_the_model(walkthrough_page, monkeypatch):
    runs = []
    original = TranslationWalkthrough.run
    monkeypatch.setattr(TranslationWalkthrough, "run", lambda self, *a, **k: runs.append(a) or original(self, *a, **k))
    at = walkthrough_page({"model": "translate:de-en", "step": "dec_self", "layer": "2", "head": "3"})
    clean(at)
    assert len(runs) == 1
    text = at.text_input(key="walkthrough_text").value
    trace = original(TranslationWalkthrough(app_models_root() / "translate"), text, "de", "en")  # not counted
    shown = heat(at, "dec_self_weights", WEIGHTS)
    np.testing.assert_allclose(shown, trace.decoder["dec_self_weights"][1, 2], atol=5e-4)  # layer 2, head 3
    masked = heat(at, "dec_self_masked", MASKED)
    above = np.triu_indices(len(masked), 1)
    assert not np.isfinite(masked[above]).any()  # −∞ above the diagonal: blank
    assert np.isfinite(np.tril(masked)[np.tril_indices(len(masked))]).all()
    for head in (1, 2, 4):
        at.slider(key="walkthrough_head").set_value(head).run()
        clean(at)
    at.selectbox(key="walkthrough_step").set_value("dec_cross").run()
    clean(at)
    assert len(runs) == 1, "moving through heads and steps must not run the model again"
    assert at.query_params["step"] == "dec_cross" and at.query_params["head"] == "4"
    (link,) = [link for link in at.main.get("page_link") if link.proto.page == "Decoding_explorer"]
    assert parse_qs(link.proto.query_string) == {"direction": ["de-en"], "text": [text]}


def test_the_maps_are_markup_with_the_graphs_numbers_and_hover_and_zoom_draws_plotlys(walkthrough_page):
    """Issue 52: the maps are markup (token × token: a table; token × dimension: an image), which the browser draws
    far faster than plotly; the "Hover and zoom" toggle draws plotly's maps of the same numbers."""
    at = walkthrough_page({"model": "translate:de-en", "step": "scores", "layer": "2", "head": "3"})
    clean(at)
    text = at.text_input(key="walkthrough_text").value
    trace = TranslationWalkthrough(app_models_root() / "translate").run(text, "de", "en")
    weights, raw = trace.encoder["enc_self_weights"][1, 2], trace.encoder["enc_self_scores"][1, 2]
    assert len(weights) <= 40 and not at.get("plotly_chart"), "a short source's maps are markup"
    np.testing.assert_allclose(heat(at, "", WEIGHTS), weights, atol=5e-4)  # the hovers' 3 decimals
    np.testing.assert_allclose(heat(at, "", RAW), raw, atol=5e-5)  # 4 decimals
    at.toggle(key="walkthrough_interactive").set_value(True).run()
    clean(at)
    np.testing.assert_allclose(heat(at, "scores_weights"), weights, atol=1e-6)
    np.testing.assert_allclose(heat(at, "scores_raw"), raw, atol=1e-5)
    at.toggle(key="walkthrough_interactive").set_value(False).run()
    at.selectbox(key="walkthrough_step").set_value("ffn").run()
    clean(at)
    images = [m.value for m in at.markdown if 'class="tx-map"' in m.value]
    hidden, stream = trace.encoder["enc_ff_hidden"][1], trace.encoder["enc_ff_stream"][1]
    assert [re.search(r'data-rows="(\d+)" data-columns="(\d+)"', m).groups() for m in images] == \
        [tuple(map(str, hidden.shape)), tuple(map(str, stream.shape))]
    assert f"value {hidden.min():.4g} " in images[0] and f"> {hidden.max():.4g}</p>" in images[0]  # ReLU: 0 up
    assert not at.get("plotly_chart"), "the bars of the ReLU's zeros are markup too (bars_markup.py)"
    [zeros] = [m.value for m in at.markdown if 'class="tx-wbars"' in m.value]
    shares = [float(x) / 100 for x in re.findall(r'line-height:0.9em;margin:1px 0">(\d+)%</span>', zeros)]
    np.testing.assert_allclose(shares, (hidden == 0).mean(axis=-1), atol=0.005)  # one per token, in its order


def test_the_output_step_lists_the_candidates_and_the_greedy_choice(walkthrough_page):
    at = walkthrough_page({"model": "translate:de-en", "step": "output", "position": "1"})
    clean(at)
    text = at.text_input(key="walkthrough_text").value
    trace = TranslationWalkthrough(app_models_root() / "translate").run(text, "de", "en")
    (table,) = [t for t in at.table if "logit" in t.value.columns]  # st.table: up to 40 rows (views.table)
    top = table.value.iloc[0]
    assert int(top["id"]) == int(trace.decoder["log_probs"][1].argmax()) == trace.output_ids[1]
    downloads = [b for b in at.get("download_button") if "output_full" in b.proto.id]
    assert downloads, "the whole distribution is downloadable"
    other = at.selectbox(key="walkthrough_alternative_1")
    second = other.options[1]
    other.select_index(1).run()
    clean(at)
    assert any(f"With `{second.split(' (')[0]}` at position 1" in m.value for m in at.markdown)


def test_a_shared_link_reproduces_the_view(walkthrough_page):
    at = walkthrough_page({"model": "sentiment", "text": "dull, slow and far too long", "step": "scores",
                           "layer": "2", "head": "2", "query": "1"})
    clean(at)
    assert at.radio(key="walkthrough_model").value == "sentiment"
    assert at.text_input(key="walkthrough_text").value == "dull, slow and far too long"
    assert at.selectbox(key="walkthrough_step").value == "scores"
    assert at.slider(key="walkthrough_layer").value == 2 and at.slider(key="walkthrough_head").value == 2
    assert at.selectbox(key="walkthrough_query").value == 1
    assert at.query_params["query"] == "1" and at.query_params["model"] == "sentiment"


def link_notes(at: AppTest) -> str:
    return " ".join(w for w in values(at.warning) if "link was corrected" in w)


# issue 34, 8: each bad value is corrected and the note names the parameter, the bad value and the value used
BAD_LINKS = {
    "malformed": ({"model": "klingon", "step": "abc", "layer": "-3", "head": "x"},
                  {"model": wt.MODEL_CHOICES[0], "step": "tokens"},
                  ["`model=klingon` is not a model this page walks through", f"{wt.MODEL_CHOICES[0]} is used",
                   "`step=abc` is not a step of this page: the first step is used",
                   "`layer=-3` is below the first (1): layer 1 is used", "`head=x` is not a whole number: head 1"]),
    "too large": ({"model": "sentiment", "text": "dull, slow and far too long", "step": "scores", "layer": "99",
                   "head": "99", "query": "99"},
                  {"step": "scores", "layer": 2, "head": 2, "query": 14},
                  ["`layer=99` is outside this model's layers 1–2: 2 is used", "`head=99` is outside this model's "
                   "heads 1–2: 2 is used", "`query=99` is past this text's last query row (14): 14 is used"]),
    "another model's step": ({"model": "sentiment", "step": "dec_cross"}, {"step": "tokens"},
                             ["`step=dec_cross` is not a step of the model shown: the first step (tokens) is used"]),
    "position": ({"model": "translate:de-en", "step": "output", "position": "999"}, {},
                 ["`position=999` is past this output's last position"]),
}


@pytest.mark.parametrize("case", BAD_LINKS)
def test_bad_links_are_corrected_and_the_user_is_told(walkthrough_page, case):
    params, used, said = BAD_LINKS[case]
    at = walkthrough_page(params)
    clean(at)
    controls = {"model": at.radio, "step": at.selectbox, "layer": at.slider, "head": at.slider,
                "query": at.selectbox}
    for name, value in used.items():
        assert controls[name](key=f"walkthrough_{name}").value == value, name
    for words in said:
        assert words in link_notes(at)
    move = "walkthrough_back" if at.button(key="walkthrough_next").disabled else "walkthrough_next"  # last step
    at.button(key=move).click().run()  # said once: the user's own moves need no note
    assert not link_notes(at)


def test_a_good_link_gets_no_note_and_a_value_kept_from_another_model_is_clamped_quietly(walkthrough_page):
    at = walkthrough_page({"model": "translate:de-en", "step": "scores", "layer": "2", "head": "4"})
    assert not link_notes(at) and at.slider(key="walkthrough_head").value == 4
    at.radio(key="walkthrough_model").set_value("sentiment").run()
    clean(at)
    assert at.slider(key="walkthrough_head").value == 2 and not link_notes(at)


def test_bad_input(walkthrough_page):
    at = walkthrough_page({"model": "translate:de-en"})
    at.text_input(key="walkthrough_text").input("   ").run()
    clean(at)
    assert any("Type a sentence" in m for m in values(at.info))
    at.text_input(key="walkthrough_text").input("Wetter " * 400).run()
    clean(at)
    assert any("truncated" in m for m in values(at.warning))
    at.text_input(key="walkthrough_text").input("🙂 ✈️ 東京").run()
    assert not at.exception


def test_missing_walkthrough_graphs_name_the_command(walkthrough_page, tmp_path):
    root = tmp_path / "models"
    shutil.copytree(app_models_root(), root)
    (root / "sentiment" / "onnx" / "classifier_walkthrough.fp32.onnx").unlink()
    at = walkthrough_page({"model": "sentiment"}, root=root)
    assert not at.exception
    assert any("--if-stale" in m and "make run" in m for m in values(at.error))


def test_back_and_next_are_disabled_where_they_would_go_nowhere(walkthrough_page):
    """Issue 44.7: at step 13/13 "Next ▶" stayed enabled and a click on it did nothing."""
    at = walkthrough_page()
    steps = at.selectbox(key="walkthrough_step").options
    assert at.button(key="walkthrough_back").disabled and not at.button(key="walkthrough_next").disabled
    at.selectbox(key="walkthrough_step").select_index(len(steps) - 1).run()
    clean(at)
    assert at.button(key="walkthrough_next").disabled and not at.button(key="walkthrough_back").disabled
    at.button(key="walkthrough_back").click().run()
    assert not at.button(key="walkthrough_next").disabled


def test_a_short_table_is_plain_with_four_significant_digits_and_a_long_one_scrolls():
    """views.table: st.table up to 40 rows (the browser draws it far faster than st.dataframe's grid), its fractions
    to 4 significant digits in plain decimals (a small one neither 0.0000 nor e-notation), whole numbers as they
    are, −∞ said; beyond, st.dataframe."""
    def app():
        from playground.walkthrough import views

        views.table([{"key": "0: <2en>", "exp": 0.0000512345, "weight": 0.89274, "id": 12345, "masked": float("-inf"),
                      "score": -41.83678}], "short")
        views.table([{"key": str(i), "weight": 0.5} for i in range(views.TABLE_ROWS + 1)], "long")

    at = AppTest.from_function(app).run()
    assert not at.exception and len(at.table) == 1 and len(at.dataframe) == 1
    shown = pa.ipc.open_stream(at.table[0].proto.arrow_data.styler.display_values).read_pandas()
    assert list(shown.iloc[0])[:6] == ["0: <2en>", "0.00005123", "0.8927", "12345", "−∞", "-41.84"]
