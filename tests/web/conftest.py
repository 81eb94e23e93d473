"""What the web tests share: the static folder built from the tiny exported translator (int8 + fp32), served by
`python -m http.server` on 127.0.0.1, and one Debian chromium. onnxruntime-web's tarball comes from .cache/web/
(`make web` fetched it); where it is not cached and the npm registry does not answer, the tests are skipped."""
from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser_fixtures import CHROMIUM, launched_chromium
from export_fixtures import exported

from web import ort_package
from web.build import BuildOptions, build


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def static_server(folder: Path):
    """`python -m http.server` on the folder, on a free 127.0.0.1 port; yields its URL once it answers."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "-b", "127.0.0.1", "-d", str(folder)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(url + "/config.json", timeout=1).close()
                break
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="session")
def web_folder(tmp_path_factory):
    """dist/web built from the tiny exported translator, int8 and fp32 (gzip level 1: the test's bytes, not size)."""
    try:
        ort_package.tarball(log=lambda _: None)
    except ort_package.PackageError as e:
        pytest.skip(f"onnxruntime-web is not cached and the npm registry does not answer: {e}")
    out = tmp_path_factory.mktemp("web") / "dist"
    build(BuildOptions(model_dir=exported("translate"), out=out, compresslevel=1, log=lambda _: None))
    return out


@pytest.fixture(scope="session")
def web_url(web_folder):
    with static_server(web_folder) as url:
        yield url


@pytest.fixture(scope="session")
def chromium():
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium)")
    with launched_chromium() as browser:
        yield browser


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
