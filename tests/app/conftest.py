"""Fixtures of the page tests (tests/app/): the tiny exported models' root, and the app opened on a page."""
from __future__ import annotations

from pathlib import Path

import pytest
from app_fixtures import app_models_root, open_app
from streamlit.testing.v1 import AppTest


@pytest.fixture(scope="module")
def model_root() -> Path:
    return app_models_root()


@pytest.fixture
def open_page(model_root, monkeypatch):
    """open_page(name, root=None) -> AppTest showing that page, checked to have raised nothing."""

    def open_(name: str | None = None, root: Path | None = None) -> AppTest:
        return open_app(monkeypatch, root or model_root, name)

    return open_
