"""The Decoding explorer (issue 23, part 2) on the tiny exported test models (tests/app_fixtures.py): the step
distributions are the backend's own numbers, the sliders redraw without running the model, the tree's red path is
what beam_search returns, the page's state travels in the URL, and bad input gets the other pages' messages."""
from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

import numpy as np
import pytest
from app_fixtures import app_models_root, open_app, values
from export_fixtures import GERMAN
from streamlit.elements.lib import policies
from streamlit.testing.v1 import AppTest

from runtime import OnnxTranslator
from runtime.batching import pad
from runtime.onnx_backend import OnnxBackend

pytestmark = pytest.mark.exports

PAGE = "pages/6_Decoding_explorer.py"


@pytest.fixture
def decoding_page(monkeypatch):
    def open_(params: dict[str, str] | None = None) -> AppTest:
        return open_app(monkeypatch, app_models_root(), PAGE, params)

    return open_


@pytest.fixture(scope="module")
def translator() -> OnnxTranslator:
    return OnnxTranslator(app_models_root() / "translate", provider="cpu")


def figure(at: AppTest, key: str) -> dict:
    chart = next(c for c in at.get("plotly_chart") if key in c.proto.id)
    return json.loads(chart.proto.spec)


def bars(at: AppTest) -> dict[int, float]:
    """token id -> the probability its bar shows (the markup's data attributes, playground/decoding/bars.py)."""
    (markup,) = [m.value for m in at.markdown if 'class="tx-bars"' in m.value]
    return {int(token): float(shown) for token, shown in re.findall(r'data-token-id="(\d+)" data-shown="([^"]+)"',
                                                                     markup)}


def test_each_step_shows_the_backends_own_next_token_distribution(decoding_page, translator):
    at = decoding_page()
    text = at.text_input(key="decoding_text").value
    src, _ = translator.source_ids(text, "en")
    ids, mask = pad([src], translator.tokenizer.pad_id)
    backend = translator.backend
    state, token = backend.encode(ids, mask), translator.tokenizer.bos_id
    for step in (1, 2, 3):
        if step > 1:
            at.slider(key="decoding_step").set_value(step).run()
        log_probs, state = backend.step(np.array([token], dtype=np.int64), state)
        probs = np.exp(log_probs[0].astype(np.float64))
        shown = bars(at)
        top = np.argsort(-probs, kind="stable")[:len(shown)]
        assert list(shown) == top.tolist()
        assert np.allclose(list(shown.values()), probs[top] / probs.sum(), atol=1e-6)
        token = int(top[0])  # the greedy path


def test_sliders_redraw_from_the_stored_numbers_without_running_the_model(decoding_page, monkeypatch):
    at = decoding_page()
    calls = []
    for name in ("encode", "step"):
        original = getattr(OnnxBackend, name)
        monkeypatch.setattr(OnnxBackend, name, lambda self, *a, _f=original, _n=name, **kw: calls.append(_n) or
                            _f(self, *a, **kw))
    before = bars(at)
    at.slider(key="decoding_temperature").set_value(2.0).run()
    hotter = bars(at)
    assert hotter != before and max(hotter.values()) < max(before.values())  # flatter
    at.slider(key="decoding_top_k").set_value(3).run()
    assert len(bars(at)) == 3 and sum(bars(at).values()) == pytest.approx(1.0)
    assert any("removed" in c and "117 of 120 tokens dropped" in c for c in values(at.caption))
    at.slider(key="decoding_top_p").set_value(0.05).run()
    assert len(bars(at)) == 1
    at.slider(key="decoding_step").set_value(2).run()
    assert not at.exception and calls == []
    at.text_input(key="decoding_text").input(GERMAN[0]).run()  # a new sentence does run it
    assert "step" in calls


def test_the_trees_red_path_is_what_beam_search_returns(decoding_page, translator):
    at = decoding_page()
    text = at.text_input(key="decoding_text").value
    for beam in (4, 2):
        at.slider(key="decoding_beam").set_value(beam).run()
        (result,) = [t for t in figure(at, "decoding_tree")["data"] if t.get("name") == "the result"]
        out = translator.translate([text], "de", "en", method="beam", beam=beam)[0]
        assert result["text"][1:] == out.tokens
        assert any(f"score {out.score:.3f}" in m for m in values(at.info))


def test_a_link_reproduces_the_view_and_the_view_writes_its_link(decoding_page):
    params = {"direction": "en-de", "text": "The weather is nice today.", "step": "2", "temperature": "0.5",
              "top_k": "7", "top_p": "0.9", "beam": "3"}
    at = decoding_page(params)
    assert at.radio(key="decoding_direction").value == ("en", "de")
    assert at.text_input(key="decoding_text").value == params["text"]
    assert at.slider(key="decoding_step").value == 2
    assert at.slider(key="decoding_temperature").value == 0.5
    assert (at.slider(key="decoding_top_k").value, at.slider(key="decoding_top_p").value) == (7, 0.9)
    assert at.slider(key="decoding_beam").value == 3
    at.slider(key="decoding_top_k").set_value(4).run()
    assert at.query_params["top_k"] == ["4"] or at.query_params["top_k"] == "4"
    assert dict(at.query_params)["text"] in (params["text"], [params["text"]])
    (link,) = [link for link in at.main.get("page_link") if link.proto.page == "Walkthrough"]  # the same sentence
    assert parse_qs(link.proto.query_string) == {"model": ["translate:en-de"], "text": [params["text"]],
                                                 "step": ["output"]}


# each bad value, the value used instead, and the words of the note that names both (issue 34, 8)
BAD_LINKS = {
    "unparsable": ({"direction": "xx-yy", "step": "abc", "temperature": "hot", "top_p": "nan"},
                   {"direction": ("de", "en"), "step": 1, "temperature": 1.0, "top_p": 1.0},
                   ["`direction=xx-yy` is not a direction this model translates", "`step=abc` is not a whole number",
                    "`temperature=hot` is not a number: 1 is used", "`top_p=nan` is not a number: 1 is used"]),
    "below range": ({"step": "0", "temperature": "0", "top_k": "-5", "beam": "0"},
                    {"step": 1, "temperature": 0.1, "top_k": 0, "beam": 1},
                    ["`step=0` is below the first step: 1 is used", "`temperature=0` is outside the slider's range "
                     "0.1–3: 0.1 is used", "`top_k=-5` is outside the slider's range 0–100: 0 is used",
                     "`beam=0` is outside the slider's range 1–8: 1 is used"]),
    "above range": ({"step": "999", "temperature": "99", "top_k": "101", "top_p": "2", "beam": "9"},
                    {"temperature": 3.0, "top_k": 100, "top_p": 1.0, "beam": 8},
                    ["`step=999` is past this sentence's last step", "`temperature=99` is outside the slider's range "
                     "0.1–3: 3 is used", "`top_k=101` is outside the slider's range 0–100: 100 is used",
                     "`top_p=2` is outside the slider's range 0.05–1: 1 is used",
                     "`beam=9` is outside the slider's range 1–8: 8 is used"]),
}


@pytest.mark.parametrize("case", BAD_LINKS)
def test_bad_links_are_corrected_and_the_user_is_told(decoding_page, case):
    params, used, said = BAD_LINKS[case]
    at = decoding_page(params)  # open_app fails on any exception or error element
    assert at.radio(key="decoding_direction").value == used.get("direction", ("de", "en"))
    for name, value in used.items():
        if name != "direction":
            assert at.slider(key=f"decoding_{name}").value == value, name
    step = at.slider(key="decoding_step")
    if params["step"] == "999":
        assert step.value == step.max and f"{step.max:g} is used instead" in " ".join(values(at.warning))
    notes = " ".join(w for w in values(at.warning) if "link was corrected" in w)
    for words in said:
        assert words in notes
    at.slider(key="decoding_temperature").set_value(0.5).run()  # said once: the user's own changes need no note
    assert not [w for w in values(at.warning) if "link was corrected" in w]


def test_a_good_link_gets_no_note(decoding_page):
    at = decoding_page({"direction": "en-de", "step": "1", "temperature": "0.5", "top_k": "0", "beam": "8"})
    assert not [w for w in values(at.warning) if "link was corrected" in w]


def test_a_link_sets_the_sliders_without_streamlits_duplicate_value_warning(decoding_page, monkeypatch, caplog):
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # Streamlit logs it once per process
    at = decoding_page({"temperature": "0.5", "top_k": "7", "beam": "3", "step": "2"})
    assert at.slider(key="decoding_temperature").value == 0.5
    assert "created with a default value" not in caplog.text


@pytest.mark.parametrize("case, text", [("empty", "   "), ("over-long", "Das Wetter ist heute schön. " * 60),
                                        ("out of domain", "Das ist 🙂 super 🚀🇩🇪 — ∑ 漢字")])
def test_bad_input_is_said(decoding_page, case, text):
    at = decoding_page()
    at.text_input(key="decoding_text").input(text).run()
    assert not at.exception
    warnings = " ".join(values(at.warning))
    if case == "empty":
        assert any("Type a sentence" in m for m in values(at.info)) and not at.get("plotly_chart")
    else:
        assert bars(at)
    assert ("truncated" in warnings) == (case == "over-long")
    assert ("outside what the model was trained on" in warnings) == (case == "out of domain")


def test_compare_decodes_three_ways_and_shows_the_provider(decoding_page):
    at = decoding_page()
    assert any("onnxruntime on **" in c for c in values(at.caption))
    at.button(key="decoding_compare").click().run()
    table = at.dataframe[0].value
    assert list(table["method"]) == ["greedy", "beam (4)", "sampled"]
    at.slider(key="decoding_temperature").set_value(0.5).run()
    assert not at.dataframe  # a result is dropped once a setting changes


def test_the_trees_path_is_the_result_when_later_hypotheses_beat_the_first_finished():
    """On the tiny random models the first finished hypothesis always stays the best; here (EOS made likelier step by
    step, length penalty 1) later ones beat it, some in the same step, and the drawn path must be the result's."""
    import torch
    from conftest import tiny_seq2seq
    from decoding_fixtures import EosRamp, padded_batch

    from playground.decoding import numbers
    from runtime.decoding import BeamTree, beam_search
    from tx.decoding import TorchBackend

    torch.manual_seed(2)
    src, mask = padded_batch([7, 3, 5])
    tree = BeamTree()
    hyps = beam_search(EosRamp(TorchBackend(tiny_seq2seq()), ramp=0.5), src, mask, max_len=12, beam=4,
                       length_penalty=1.0, observer=tree)
    trace = tree.steps
    for s, hyp in enumerate(hyps):
        nodes = [r for step in trace for r in step if r["sentence"] == s]
        by_id = {r["id"]: r for r in nodes}
        assert [by_id[i]["token"] for i in numbers.best_path(nodes)] == hyp.tokens
    first_finished = next(r for step in trace for r in step if r["sentence"] == 0 and r["status"] == "finished")
    assert not first_finished["best"]  # the case this test is for
