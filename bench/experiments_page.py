"""Server time of the Experiments page, measured through AppTest on the models the app serves (models/ or
TX_MODELS_DIR): each interaction is one whole script run, server side, with a new sentence each time so no cache
answers (except where noted). A benchmark, not a test: `python -m bench experiments_page`.
"""
from __future__ import annotations

import statistics

from playground.experiments.link import Head

from . import bench_parser
from .decoding_page import SENTENCES, open_page, timed_run

PAGE = "pages/9_Experiments.py"


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("experiments_page", __doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    at = open_page(PAGE)
    times: dict[str, list[float]] = {}

    def measure(name: str) -> None:
        times.setdefault(name, []).append(timed_run(at))

    for exp in ("lens", "knockout", "occlusion", "compare"):  # the first visit of each loads its graphs
        at.radio(key="exp_exp").set_value(exp)
        timed_run(at)
    for i in range(args.repeats):  # the page is on "compare" against an edit here (a widget exists after a run)
        text = f"{SENTENCES[i % len(SENTENCES)]} ({i})"
        at.text_input(key="exp_text").input(text)
        measure("compare: a new sentence A (B unchanged)")
        at.text_input(key="exp_other").input(text.replace("(", "[").replace(")", "]"))
        measure("compare: a new edit (B translated)")
        at.radio(key="exp_against").set_value("int8")
        measure("compare: int8 against fp32")
        at.radio(key="exp_exp").set_value("lens")
        measure("logit lens, first time for this sentence")
        at.selectbox(key="exp_position").set_value(1)
        measure("logit lens: another position (cached)")
        at.radio(key="exp_exp").set_value("occlusion")
        measure("occlusion, first time for this sentence")
        at.radio(key="exp_exp").set_value("knockout")
        measure("knock out heads: the page, none chosen yet")
        at.multiselect(key="exp_heads").set_value([Head("dec_cross", 1, 1 + i % 4)])
        measure("knock out one head")
        at.button(key="exp_grid").click()
        measure("head-importance grid over the sentence (every head alone)")
        at.radio(key="exp_exp").set_value("compare")
        timed_run(at)
        at.radio(key="exp_against").set_value("edit")
        timed_run(at)
    for name, values in times.items():
        print(f"{name}: median {statistics.median(values):.0f} ms, max {max(values):.0f} ms over {len(values)} runs "
              "(AppTest's whole script run, server side)")
    return 0
