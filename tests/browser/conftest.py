"""What the browser test files share within a test process: one `streamlit run app.py` on the tiny exported models
(the one chromium is tests/conftest.py's). Each file started its own before (six servers and six chromiums for one
`make test`: a server's start and first page cost seconds of the 2 cores); each test still opens its own browser
context, and with it its own Streamlit session."""
from __future__ import annotations

import pytest
from browser_fixtures import models_root, streamlit_server


@pytest.fixture(scope="session")
def app_server():
    """(url, pid) of the app on the tiny exported models (or TX_BROWSER_MODELS), up until the last browser test."""
    with streamlit_server(models_root(), "streamlit-server.log") as found:
        yield found
