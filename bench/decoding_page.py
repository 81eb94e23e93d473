"""Server time of the Decoding explorer, measured through AppTest on the models the app serves (models/ or
TX_MODELS_DIR): a redraw after a slider move (the model is not run again) and a new sentence (greedy + beam search
with its trace). A benchmark, not a test: `python -m bench decoding_page [--repeats N]`.
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from . import bench_parser

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGE = "pages/6_Decoding_explorer.py"
SENTENCES = ["Ich trinke keinen Alkohol.", "Kannst du Auto fahren?", "Wo ist die nächste Apotheke?",
             "Ich verstehe nicht, was du meinst.", "Könnten Sie bitte etwas langsamer sprechen?"]


def open_page(page: str) -> AppTest:
    """The app in AppTest, switched to `page` (its first run done)."""
    at = AppTest.from_file(APP, default_timeout=300).run()
    return at.switch_page(page).run()


def timed_run(at: AppTest) -> float:
    start = time.perf_counter()
    at.run()
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("decoding_page", __doc__)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    at = open_page(PAGE)
    redraws, sentences = [], []
    for i in range(args.repeats):
        at.slider(key="decoding_temperature").set_value(round(0.5 + 0.1 * (i % 10), 2))
        redraws.append(timed_run(at))
        at.slider(key="decoding_top_k").set_value(i % 20)
        redraws.append(timed_run(at))
    for i in range(args.repeats):
        at.text_input(key="decoding_text").input(f"{SENTENCES[i % len(SENTENCES)]} ({i})")
        sentences.append(timed_run(at))
    for name, times in (("redraw after a slider move", redraws), ("a new sentence", sentences)):
        print(f"{name}: median {statistics.median(times):.0f} ms, max {max(times):.0f} ms over {len(times)} runs "
              "(AppTest's whole script run, server side)")
    return 0
