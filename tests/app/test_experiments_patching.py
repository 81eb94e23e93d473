"""The Experiments page's "Patch activations" (issue 50) on the tiny exported test models (tests/app_fixtures.py): its
heatmap draws the engine's numbers, a chosen cell's re-translation is the engine's, the classifier's grids too, its
settings travel in the URL (a malformed link is corrected, and said), and bad input gets words.

The tiny translator is untrained (every sentence gets the same output), so the metric's position and token B are
chosen in the link."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from app_fixtures import app_models_root, clean, open_app, values
from streamlit.testing.v1 import AppTest

from runtime import experiments as engine

pytestmark = pytest.mark.exports

PAGE = "pages/9_Experiments.py"
TEXT, EDITED = "Das Wetter ist heute schön.", "Das Wetter ist morgen schön."  # the same number of pieces
PIECE_B = "▁m"  # a piece of the edited source: token B of the metric
REVIEW, EDITED_REVIEW = "a gem of a film, warm and funny", "a gem of a film, cold and funny"


def open_page(monkeypatch, params: dict[str, str]) -> AppTest:
    return open_app(monkeypatch, app_models_root(), PAGE, {"exp": "patch", **params})


def charts(at: AppTest) -> dict[str, list[dict]]:
    """Every chart's rows, by its title's first line (the spec's data travels as an Arrow table beside it)."""
    out = {}
    for chart in at.get("vega_lite_chart"):
        title = json.loads(chart.proto.spec)["title"]
        out[" ".join(title if isinstance(title, list) else [title])] = pa.ipc.open_stream(
            chart.proto.data.data).read_all().to_pylist()
    return out


@pytest.fixture(scope="module")
def pair():
    model = engine.ExperimentModel(app_models_root() / "translate")
    b = model.tokenizer.token_to_id(PIECE_B)
    return model, engine.patch_pair(model, TEXT, EDITED, position=2, token_b=b)


def test_the_encoder_grid_draws_the_engines_numbers_and_a_cell_retranslates(monkeypatch, pair):
    model, expected = pair
    grid = engine.encoder_residual_grid(model, expected)
    at = open_page(monkeypatch, {"text": TEXT, "other": EDITED, "at": "2", "b": PIECE_B, "grid": "enc_resid",
                                 "cell": "1.10"})
    clean(at)
    (title, rows), = charts(at).items()
    assert title.startswith("Encoder residual stream")
    drawn = {row["cell"]: row["v"] for row in rows}
    want = {f"{r}.{c}": v for r, row in enumerate(grid.normalised) for c, v in enumerate(row)}
    assert drawn.keys() == want.keys()
    np.testing.assert_allclose([drawn[k] for k in want], list(want.values()), atol=1e-5)
    redone = engine.retranslate(model, expected, grid.cells[1][10])
    assert any(f"Re-translated with one patch** ({redone.label})" in v for v in values(at.markdown))
    params = dict(at.query_params)
    assert {k: params[k] if isinstance(params[k], str) else params[k][0] for k in ("other", "at", "b", "cell")} \
        == {"other": EDITED, "at": "2", "b": PIECE_B, "cell": "1.10"}
    assert len(at.get("download_button")) == 3 * len(at.get("vega_lite_chart")) + 1  # SVG, PNG, CSV; + HTML
    at.run()  # the same grid again (a rerun): it was a cached function that moved the progress bar, and failed
    clean(at)  # when replayed (CacheReplayClosureError)
    at.radio(key="exp_pgrid").set_value("memory").run()  # another grid: row.column would be another patch there
    clean(at)
    assert "cell" not in dict(at.query_params) and not any("Re-translated" in v for v in values(at.markdown))


def test_the_head_and_decoder_grids_draw(monkeypatch, pair):
    model, expected = pair
    at = open_page(monkeypatch, {"text": TEXT, "other": EDITED, "at": "2", "b": PIECE_B, "grid": "dec_cross"})
    clean(at)
    (rows,) = charts(at).values()
    np.testing.assert_allclose(sorted(r["v"] for r in rows),
                               sorted(engine.head_grid(model, expected, "dec_cross").normalised.ravel()), atol=1e-5)
    at.radio(key="exp_pgrid").set_value("dec_resid").run()
    clean(at)
    (rows,) = charts(at).values()
    assert {r["x"] for r in rows} == {"emb", "L1", "L2"} and len(rows) == 3 * 3  # points × target positions 0..2


def test_the_classifiers_grids_draw_the_engines_numbers(monkeypatch):
    cem = engine.ClassifierExperimentModel(app_models_root() / "sentiment")
    result = engine.classify_patching(cem, REVIEW, EDITED_REVIEW)
    at = open_page(monkeypatch, {"model": "sentiment", "text": REVIEW, "other": EDITED_REVIEW, "grid": "enc_self"})
    clean(at)
    (rows,) = charts(at).values()
    np.testing.assert_allclose(sorted(r["v"] for r in rows), sorted(result.heads.normalised.ravel()), atol=1e-5)
    assert any("logit(" in v for v in values(at.markdown))


def test_bad_input_and_a_malformed_link_get_words(monkeypatch):
    at = open_page(monkeypatch, {"text": TEXT, "other": TEXT})
    clean(at)
    assert any("B is still the same as A" in v for v in values(at.info))
    at = open_page(monkeypatch, {"text": TEXT, "other": EDITED})  # auto metric: the untrained outputs agree
    clean(at)
    assert any("same output" in v for v in values(at.warning))
    at = open_page(monkeypatch, {"text": "Ich trinke keinen Alkohol.", "other": "Kannst du Auto fahren?", "at": "2",
                                 "b": PIECE_B})
    clean(at)
    assert any("no position aligns" in v for v in values(at.warning))
    at = open_page(monkeypatch, {"text": TEXT, "other": EDITED, "at": "x", "b": PIECE_B, "grid": "nope",
                                 "cell": "a.b"})
    clean(at)
    warned = " ".join(values(at.warning))
    assert "not a patching grid" in warned and "not row.column" in warned and "auto is used" in warned
