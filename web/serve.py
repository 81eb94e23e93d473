"""python -m web serve [FOLDER] [--port N] [--isolated]: serve a built folder on 127.0.0.1, as a static host would.

`python -m http.server` with two headers more where asked: `Cross-Origin-Opener-Policy: same-origin` and
`Cross-Origin-Embedder-Policy: require-corp` make the page cross-origin isolated, the only state in which a browser
gives it SharedArrayBuffer, so onnxruntime-web's wasm build can run on several threads (web/static/worker.js).
Every file is sent as stored: the gzipped graphs, wasm binary and tokenizer go out as application/gzip, without a
Content-Encoding, and the page inflates them itself (web/static/files.js), as on any host.
"""
from __future__ import annotations

import argparse
import functools
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ISOLATION_HEADERS = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}


class StaticHandler(SimpleHTTPRequestHandler):
    # Pinned rather than read from the host's /etc/mime.types: a module worker refuses a script that is not
    # JavaScript, and the page must see .gz files as opaque bytes (no Content-Encoding the browser would undo).
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript", ".mjs": "text/javascript",
                      ".wasm": "application/wasm", ".json": "application/json", ".gz": "application/gzip"}

    def __init__(self, *args, isolated: bool, **kwargs):
        self.isolated = isolated  # before super().__init__, which answers the request
        super().__init__(*args, **kwargs)

    def end_headers(self):
        if self.isolated:
            for name, value in ISOLATION_HEADERS.items():
                self.send_header(name, value)
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 (http.server's name): quiet, as under `make run`
        pass


def make_server(folder: Path, port: int, isolated: bool) -> ThreadingHTTPServer:
    """A server of `folder` on 127.0.0.1:port (0: a free one), never on another interface."""
    handler = functools.partial(StaticHandler, directory=str(folder), isolated=isolated)
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m web serve", description=__doc__.split("\n\n")[1])
    parser.add_argument("folder", type=Path, nargs="?", default=Path("dist/web"), help="a built folder")
    parser.add_argument("--port", type=int, default=8502)
    parser.add_argument("--isolated", action="store_true",
                        help="send the cross-origin isolation headers (the page then runs on several threads)")
    args = parser.parse_args(argv)
    if not (args.folder / "index.html").is_file():
        print(f"error: {args.folder} is not a built folder (no index.html): run `python -m web` first",
              file=sys.stderr)
        return 1
    try:
        server = make_server(args.folder, args.port, args.isolated)
    except OSError as e:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {e.strerror}", file=sys.stderr)
        return 1
    mode = "cross-origin isolated: threads" if args.isolated else "not isolated: one thread"
    print(f"serving {args.folder} on http://127.0.0.1:{server.server_port}/ ({mode})", flush=True)
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0

