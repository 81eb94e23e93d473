"""What the web tests share: the folder of the tiny exported translator (int8 + fp32) served on 127.0.0.1
(tests/web_fixtures.py), one Debian chromium, and a page on it with its translator loaded."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from export_fixtures import exported
from web_fixtures import built_folder, static_server

from web.build import portable_model_dir


@pytest.fixture(scope="session")
def web_model() -> Path:
    """The tiny exported translator, or the exported translator directory TX_WEB_TEST_MODEL names (read-only: a
    way to run these tests on the shipped model, or while the tiny export's cache rebuilds)."""
    chosen = os.environ.get("TX_WEB_TEST_MODEL")
    return Path(chosen) if chosen else exported("translate")


@pytest.fixture(scope="session")
def web_python_model(web_model, tmp_path_factory) -> Path:
    """What the page runs, for Python onnxruntime: the model's fp32 graphs and the page's own int8 ones (the web
    build makes them by one scheme for every CPU, which may not be the scheme this CPU's export chose)."""
    return portable_model_dir(web_model, tmp_path_factory.mktemp("web-python"))


@pytest.fixture(scope="session")
def web_folder(web_model, tmp_path_factory):
    """The folder of the translator under test."""
    return built_folder(web_model, tmp_path_factory.mktemp("web") / "dist")


@pytest.fixture(scope="session")
def web_url(web_folder):
    with static_server(web_folder) as url:
        yield url


@pytest.fixture
def web_page(chromium, web_url):
    """A fresh context on the page, its translator loaded (int8); page.requests is the context's request log."""
    context = chromium.new_context()
    page = context.new_page()
    page.requests = []
    context.on("request", lambda request: page.requests.append(request.url))
    page.goto(web_url + "/")
    page.wait_for_selector("body[data-ready='1']")
    page.evaluate("window.txWeb.load('int8')")
    yield page
    context.close()
