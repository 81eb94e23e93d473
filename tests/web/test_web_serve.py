"""`python -m web serve` (web/serve.py), without a browser: the isolation headers only with --isolated, every file
with the type a browser needs (the gzipped ones as stored bytes, no Content-Encoding), 127.0.0.1 only, and a clear
error for a folder that is not built."""
from __future__ import annotations

import contextlib
import threading
import urllib.request

import pytest

from web import serve
from web.__main__ import main

FILES = {"index.html": ("text/html", b"<!doctype html>"), "worker.js": ("text/javascript", b"// worker"),
         "ort.wasm.min.mjs": ("text/javascript", b"export {}"), "ort-wasm-simd-threaded.wasm": ("application/wasm",
                                                                                                b"\0asm"),
         "config.json": ("application/json", b"{}"), "models/encoder.int8.onnx.gz": ("application/gzip", b"\x1f\x8b")}


@pytest.fixture
def folder(tmp_path):
    for name, (_, body) in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(body)
    return tmp_path


@contextlib.contextmanager
def serving(folder, isolated: bool):
    server = serve.make_server(folder, 0, isolated)
    # shutdown() waits for serve_forever's next poll: 0.5 s by default, twice in this file
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("isolated", [True, False])
def test_files_go_out_as_stored_with_the_isolation_headers_only_when_asked(folder, isolated):
    with serving(folder, isolated) as server:
        assert server.server_address[0] == "127.0.0.1"
        for name, (content_type, body) in FILES.items():
            with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/{name}") as response:
                assert response.read() == body
                headers = response.headers
            assert headers["Content-Type"].split(";")[0] == content_type, name
            assert headers["Content-Encoding"] is None  # the page inflates .gz files itself (web/static/files.js)
            assert headers["Cross-Origin-Opener-Policy"] == ("same-origin" if isolated else None)
            assert headers["Cross-Origin-Embedder-Policy"] == ("require-corp" if isolated else None)


def test_a_folder_that_is_not_built_gets_a_clear_error(tmp_path, capsys):
    assert main(["serve", str(tmp_path / "missing"), "--port", "0"]) == 1
    assert capsys.readouterr().err == (f"error: {tmp_path / 'missing'} is not a built folder (no index.html): run "
                                       "`python -m web` first\n")
