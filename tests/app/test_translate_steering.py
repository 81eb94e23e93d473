"""The Translate page's steering on the tiny exported models: a word's alternatives, choosing one (its completion
becomes the output, the prefix goes into the box and the URL), a shared link reopening the same steered
translation, a malformed prefix in a link corrected with a notice, the n-best list, the alignment chart, and the
same through the service (tests/serve_fixtures.py's in-process API)."""
from __future__ import annotations

import re

import pytest
from app_fixtures import clean, open_app, values
from export_fixtures import GERMAN
from serve_fixtures import running_api

from playground.serving.client import SERVE_ENV
from playground.translate import alignment_markup, steering
from runtime import OnnxTranslator
from serve.settings import ServeSettings

pytestmark = pytest.mark.exports

TEXT = GERMAN[2]
LINK = {"direction": "de-en", "text": TEXT, "method": "greedy"}


def url(at) -> dict[str, str]:
    return {k: v[0] if isinstance(v, list) else v for k, v in dict(at.query_params).items()}


def alternatives(model_root) -> list:
    """The alternatives at the first word, as the runtime gives them."""
    [alts] = OnnxTranslator(model_root / "translate").translate_n_best(
        [TEXT], "de", "en", method="greedy", target_prefix=[""], return_alternatives=True,
        num_hypotheses=steering.ALTERNATIVES)
    return alts


def steered(model_root, prefix: str) -> str:
    """What a link's prefix gives: greedy from it. The tiny model's first pieces lack the "▁" its tokenizer puts
    at a text's start, so its prefix re-tokenises to other tokens; a trained model's first piece has it."""
    [found] = OnnxTranslator(model_root / "translate").translate([TEXT], "de", "en", method="greedy",
                                                                 target_prefix=[prefix])
    return found.text


def choose(at, i: int):
    at.button_group(key="translate_word").set_value(0).run()
    clean(at)
    assert len([b for b in at.button if (b.key or "").startswith("translate_use_")]) == steering.ALTERNATIVES
    at.button(key=f"translate_use_{i}").click().run()
    clean(at)
    return at


def test_choosing_an_alternative_makes_it_the_output_and_the_link_reopens_it(model_root, monkeypatch):
    i, alt = 2, alternatives(model_root)[2]  # the third likeliest: not the greedy output
    at = open_app(monkeypatch, model_root, "translate", LINK)
    clean(at)
    choose(at, i)
    prefix = steering.chosen_prefix(alt)
    assert values(at.code)[0] == alt.text and alt.text.startswith(prefix), values(at.code)
    assert at.text_input(key="translate_prefix").value == prefix
    assert url(at) == {**LINK, "prefix": prefix}
    reopened = open_app(monkeypatch, model_root, "translate", url(at))  # a new session opening the shared link
    clean(reopened)
    assert values(reopened.code)[0] == steered(model_root, prefix) and steered(model_root, prefix).startswith(prefix)
    assert reopened.text_input(key="translate_prefix").value == prefix


def test_a_malformed_prefix_in_a_link_is_dropped_with_a_notice(model_root, monkeypatch):
    at = open_app(monkeypatch, model_root, "translate", {**LINK, "prefix": "The </s> end"})
    clean(at)
    assert any("`prefix=The </s> end` holds a special token" in w and "no prefix is used instead" in w
               for w in values(at.warning)), values(at.warning)
    assert at.text_input(key="translate_prefix").value == ""
    [plain] = OnnxTranslator(model_root / "translate").translate([TEXT], "de", "en", method="greedy")
    assert values(at.code)[0] == plain.text
    assert "prefix" not in url(at)


def test_a_typed_start_is_forced_and_the_n_best_and_alignment_are_drawn(model_root, monkeypatch):
    at = open_app(monkeypatch, model_root, "translate", {**LINK, "method": "beam", "beam": "3", "n": "3",
                                                          "prefix": "me"})
    clean(at)
    [n_best] = OnnxTranslator(model_root / "translate").translate_n_best(
        [TEXT], "de", "en", method="beam", beam=3, num_hypotheses=3, target_prefix=["me"], alignment=True)
    assert values(at.code)[0] == n_best[0].text and n_best[0].text.startswith("me")
    table = next(t.value for t in at.table if "rank" in t.value.columns)
    assert list(table["translation"]) == [h.text for h in n_best] and len(n_best) > 1
    [chart] = [m.value for m in at.markdown if f'class="{alignment_markup.CLASS}"' in m.value]
    drawn = {link: float(weight) for link, weight in re.findall(r'data-link="(\d+-\d+)" data-weight="([^"]+)"', chart)}
    found = n_best[0].alignment
    assert drawn == {f"{j}-{i}": pytest.approx(float(found.weights[j][i]))
                     for j, linked in enumerate(found.links) for i in linked} and drawn, "not the output's alignment"


@pytest.fixture(scope="module")
def service(model_root):
    with running_api(ServeSettings(models_dir=str(model_root), provider="cpu", threads=1)) as where:
        yield where


def test_steering_through_the_service(service, model_root, monkeypatch):
    monkeypatch.setenv(SERVE_ENV, service)
    i, alt = 2, alternatives(model_root)[2]
    at = open_app(monkeypatch, model_root, "translate", LINK)
    clean(at)
    assert any(f"served by {service}" in c for c in values(at.caption)), values(at.caption)
    choose(at, i)
    assert values(at.code)[0] == alt.text
    assert url(at)["prefix"] == steering.chosen_prefix(alt)
    reopened = open_app(monkeypatch, model_root, "translate", url(at))
    clean(reopened)
    assert values(reopened.code)[0] == steered(model_root, steering.chosen_prefix(alt))
