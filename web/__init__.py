"""The translator in the browser: one static folder (`make web` -> dist/web/) that any web host serves.

The page runs the exported int8 (or fp32) encoder and KV-cache decoder through onnxruntime-web in a Web Worker;
the tokenizer, greedy and beam search are re-written in JavaScript (web/static/) and checked against the Python
ones (tests/web/). This package only builds the folder: it fetches onnxruntime-web's pinned tarball from the npm
registry once (sha256-checked, cached in .cache/web/), copies the page, the graphs and the tokenizer, and writes
the app's own input limits and words beside them, so the page cannot drift from runtime/text.py.
"""
