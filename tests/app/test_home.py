"""The home page (app.py) on the tiny exported test models (tests/app_fixtures.py): each model's line with its data,
metrics and opset, the provider that really runs, the page list; a broken model is never called healthy."""
from __future__ import annotations

import shutil

import pytest
from app_fixtures import app_models_root, clean, values

from runtime import OnnxTranslator

pytestmark = pytest.mark.exports


def test_home_lists_models_with_metrics_and_the_real_provider(open_page):
    at = open_page()
    clean(at)
    lines = " ".join(values(at.markdown))
    assert "**Translation** (DE → EN, EN → DE)" in lines and "**Sentiment** (negative / positive)" in lines
    assert "trans-de-en 1.9-6 (licence: GPL-2+)" in lines
    assert "test BLEU 12.30 (de-en)" in lines and "test accuracy 61.20" in lines
    assert "ONNX opset 20" in lines and "k parameters" in lines
    assert "runs the models on **" in lines
    translator = OnnxTranslator(app_models_root() / "translate")
    assert f"**{translator.provider}**" in lines
    if translator.provider_note:  # no CUDA here: the reason is shown
        assert translator.provider_note in values(at.info)
    sidebar = [link.proto.label for link in at.sidebar.get("page_link")]
    assert sidebar == ["Home", "Translate", "Sentiment", "Attention explorer", "Walkthrough", "Decoding explorer",
                       "Experiments", "Latency", "Model card", "Train your own"]
    assert len(at.main.get("page_link")) == 9  # every page but Home


def test_home_links_the_translator_in_the_browser_where_tx_web_url_says(open_page, monkeypatch):
    url = "http://127.0.0.1:8765/web/"  # `make run` sets TX_WEB_URL to where it serves dist/web
    monkeypatch.setenv("TX_WEB_URL", url)
    at = open_page()
    links = [line for line in values(at.markdown) if f"[The translator in your browser]({url})" in line]
    assert len(links) == 1, values(at.markdown)


@pytest.mark.parametrize("damage", ["corrupt decoder", "missing encoder", "broken tokenizer"])
def test_home_does_not_call_a_broken_model_healthy(open_page, model_root, tmp_path, damage):
    root = tmp_path / "models"
    shutil.copytree(model_root / "translate", root / "translate")
    shutil.copytree(model_root / "sentiment", root / "sentiment")
    folder = root / "translate"
    if damage == "corrupt decoder":
        (folder / "onnx" / "decoder.fp32.onnx").write_bytes(b"not an onnx file")
    elif damage == "missing encoder":
        (folder / "onnx" / "encoder.fp32.onnx").unlink()
    else:
        (folder / "tokenizer.json").write_text("{broken", encoding="utf-8")
    at = open_page(None, root=root)
    assert not at.exception
    (error,) = values(at.error)
    assert error.startswith("The translation model does not load") and str(folder) in error
    lines = values(at.markdown)
    assert any(line.startswith("- ❌ **Translation**") for line in lines)
    assert any(line.startswith("- ✅ **Sentiment**") for line in lines)
