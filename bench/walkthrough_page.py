"""Server time of the Walkthrough page, measured through AppTest on the models the app serves (models/ or
TX_MODELS_DIR): a redraw after a layer/head/step change (the model is not run again) and a new sentence (greedy
search + one run of each walkthrough graph). A benchmark, not a test: `python -m bench walkthrough_page`.
"""
from __future__ import annotations

import statistics

from . import bench_parser
from .decoding_page import SENTENCES, open_page, timed_run

PAGE = "pages/8_Walkthrough.py"
REDRAW_STEPS = ("scores", "qkv", "heads", "ffn", "dec_self", "dec_cross", "output")
HEAD_STEPS = {"scores", "qkv", "heads", "dec_self", "dec_cross"}  # the steps with a head slider


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("walkthrough_page", __doc__)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    at = open_page(PAGE)
    timed_run(at)  # the first visit loads the graphs
    by_kind: dict[str, list[float]] = {"head or layer change": [], "step change": []}
    for i in range(args.repeats):
        step = REDRAW_STEPS[i % len(REDRAW_STEPS)]
        at.selectbox(key="walkthrough_step").set_value(step)
        by_kind["step change"].append(timed_run(at))
        if step in HEAD_STEPS:
            at.slider(key="walkthrough_head").set_value(1 + i % 8)
            by_kind["head or layer change"].append(timed_run(at))
    sentences = []
    for i in range(args.repeats):
        at.text_input(key="walkthrough_text").input(f"{SENTENCES[i % len(SENTENCES)]} ({i})")
        sentences.append(timed_run(at))
    for name, times in (*by_kind.items(), ("a new sentence", sentences)):
        if times:
            print(f"{name}: median {statistics.median(times):.0f} ms, max {max(times):.0f} ms over {len(times)} runs "
                  "(AppTest's whole script run, server side)")
    return 0
