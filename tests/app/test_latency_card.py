"""Issue 25, findings 6-8 on the tiny exported test models (tests/app_fixtures.py): the Latency page (Stop keeps the
previous results and says how far it got; output agreement and noise next to each speed-up; a shared server;
no decoder text for the classifier), the Model card (named metric, the Transformer among its baselines, no empty
cells or raw keys, the parity tolerance, positions vs the input limit) and the CUDA sentence on every page.
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import numpy as np
import pytest
from app_fixtures import SENTIMENT_METRICS, app_models_root, array, clean, open_app, plotly_figures, values
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1 import AppTest

from runtime import OnnxSentimentClassifier, OnnxTranslator, providers, timing

pytestmark = pytest.mark.exports


@pytest.fixture(scope="module")
def model_root():
    return app_models_root()


@pytest.fixture
def open_page(model_root, monkeypatch):
    """open_page(name, root=None) -> AppTest showing that page (as tests/app/test_pages.py's fixture)."""

    def open_(name=None, root=None) -> AppTest:
        return open_app(monkeypatch, root or model_root, name)

    return open_


NOISE = "noise (p10–p90 vs PyTorch)"
RESULTS = "p50 ms"  # a column only the page's own results table has (the saved export.bench table has p50_ms)


def results_table(at):
    return next((d.value for d in at.dataframe if RESULTS in d.value.columns), None)


def run_latency(at, runs: int = 5, warmup: int = 0):
    at.slider(key="latency_runs").set_value(runs).run()
    at.slider(key="latency_warmup").set_value(warmup).run()
    at.button(key="latency_go").click().run()
    clean(at)
    return at


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


# ---------------------------------------------------------------- finding 6: Latency

def interrupted_after(rounds: int, real):
    """timing.interleaved as it behaves when Stop is clicked during round `rounds`: the page's progress call for that
    round is where Streamlit interrupts the script (it raises a ScriptControlException there)."""

    def interleaved(calls, repeats, warmup, progress=None, runs=None):
        def progress_then_stop(done: int, total: int) -> None:
            progress(done, total)
            if done == rounds:
                raise StopException()

        return real(calls, repeats, warmup, progress_then_stop, runs)

    return interleaved


def test_latency_stop_says_how_far_it_got_and_keeps_the_previous_results(open_page, monkeypatch):
    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    first = results_table(run_latency(at))
    assert first is not None
    real = timing.interleaved
    monkeypatch.setattr(timing, "interleaved", interrupted_after(2, real))
    at.button(key="latency_go").click().run()  # a second measurement, stopped during its third round
    monkeypatch.setattr(timing, "interleaved", real)
    at.button(key="latency_stop").click().run()  # the rerun Streamlit starts for the Stop click
    clean(at)
    assert any("Stopped after 2 of 5 rounds" in m for m in values(at.warning) + values(at.info))
    kept = results_table(at)
    assert kept is not None and kept.equals(first)  # the previous results, not wiped
    at.button(key="latency_go").click().run()  # a complete run replaces them and the note goes
    clean(at)
    assert not any("Stopped after" in m for m in values(at.warning) + values(at.info))


def test_latency_stop_before_any_result_says_so(open_page, monkeypatch):
    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    real = timing.interleaved
    monkeypatch.setattr(timing, "interleaved", interrupted_after(1, real))
    at.slider(key="latency_runs").set_value(5).run()
    at.slider(key="latency_warmup").set_value(1).run()
    at.button(key="latency_go").click().run()
    monkeypatch.setattr(timing, "interleaved", real)
    at.button(key="latency_stop").click().run()
    clean(at)
    assert any("Stopped after 1 of 6 rounds" in m for m in values(at.warning) + values(at.info))
    assert results_table(at) is None


def overlaps(a_ms, b_ms) -> bool:
    """export.bench_stats.distrusted's rule: the two p10-p90 ranges overlap."""
    a10, a90 = np.percentile(a_ms, [10, 90])
    b10, b90 = np.percentile(b_ms, [10, 90])
    return bool(a10 <= b90 and b10 <= a90)


def check_agreement_and_noise(at, expected_same: dict[str, bool]) -> None:
    table = results_table(at)
    systems = list(table["system"])
    assert systems[0] == "PyTorch eager"
    times = {name: array(trace["y"]) for name, trace in zip(systems, plotly_figures(at)[0]["data"], strict=True)}
    for _, row in table.iterrows():
        name = row["system"]
        if name == "PyTorch eager":
            assert row["same output as PyTorch"] == "reference" and row[NOISE] == "reference"
            continue
        assert row["same output as PyTorch"].startswith("same") == expected_same[name], row.to_dict()
        within = overlaps(times[name], times["PyTorch eager"])
        assert row[NOISE].startswith("within noise") == within, row.to_dict()
    # next to each speed-up figure: the same two verdicts
    notes = values(at.caption)
    for name in systems[1:]:
        row = table[table["system"] == name].iloc[0]
        assert any(row["same output as PyTorch"] in n and row[NOISE] in n for n in notes), notes
    assert table.notna().all().all()


def test_latency_sentiment_says_whether_outputs_agree_and_flags_noise(open_page, model_root):
    from tx.inference import SentimentAnalyzer

    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    text = at.text_input(key="latency_text_sentiment").value
    run_latency(at)
    torch_label = SentimentAnalyzer.from_dir(model_root / "sentiment").classify([text])[0].label
    expected = {f"onnxruntime {p}": OnnxSentimentClassifier(model_root / "sentiment", precision=p).classify([text])[0]
                .label == torch_label for p in ("fp32", "int8")}
    check_agreement_and_noise(at, expected)


def test_latency_translation_compares_token_ids(open_page, model_root):
    from tx.inference import Translator

    at = open_page("latency")
    at.radio(key="latency_method").set_value("greedy").run()
    text = at.text_input(key="latency_text_translate").value
    run_latency(at, runs=5)
    reference = Translator.from_dir(model_root / "translate").translate([text], "de", "en", method="greedy")[0]
    expected = {f"onnxruntime {p}": OnnxTranslator(model_root / "translate", precision=p)
                .translate([text], "de", "en", method="greedy")[0].token_ids == reference.token_ids
                for p in ("fp32", "int8")}
    check_agreement_and_noise(at, expected)


def test_latency_says_the_server_is_shared(open_page):
    at = open_page("latency")
    at.radio(key="latency_task").set_value("sentiment").run()
    run_latency(at)
    assert any("share" in c and "other users" in c for c in values(at.caption))


def test_latency_mentions_the_kv_cache_for_the_translator_only(open_page):
    at = open_page("latency")
    assert "KV cache" in page_text(at)
    at.radio(key="latency_task").set_value("sentiment").run()
    clean(at)
    assert "KV cache" not in page_text(at)


# ---------------------------------------------------------------- finding 7: Model card

def card(open_page, task: str, root=None):
    at = open_page("card", root=root)
    at.radio(key="card_model").set_value(task).run()
    clean(at)
    return at


@pytest.mark.parametrize(("task", "metric"), [("translate", "BLEU"), ("sentiment", "accuracy")])
def test_card_validation_chart_names_its_metric(open_page, task, metric):
    at = card(open_page, task)
    chart = next(c for c in plotly_figures(at) if any(t.get("name", "").startswith("valid ") and "loss" not in
                                                       t["name"] for t in c["data"]))
    assert metric in chart["layout"]["title"]["text"]
    assert metric in chart["layout"]["yaxis"]["title"]["text"]


def test_card_curves_name_their_series_in_words(open_page):
    """No raw metrics.csv column names in a chart legend (train_loss -> "train loss")."""
    at = card(open_page, "translate")
    names = [t.get("name", "") for c in plotly_figures(at) for t in c["data"]]
    assert "train loss" in names and not any("_" in n for n in names), names


def test_card_baselines_table_holds_the_transformer_with_human_labels(open_page, model_root):
    at = card(open_page, "sentiment")
    table = next(d.value for d in at.dataframe if "negation probes" in d.value.columns)
    assert list(table["model"]) == ["Transformer (this model)", "TF-IDF + logistic regression", "NB-SVM"]
    assert table["test accuracy"].iloc[0] == SENTIMENT_METRICS["test"]["accuracy"]  # from metrics.json
    assert table["test macro-F1"].iloc[0] == SENTIMENT_METRICS["test"]["macro_f1"]
    calibration = json.loads((model_root / "sentiment" / "calibration.json").read_text(encoding="utf-8"))
    assert table["test ECE %"].iloc[0] == calibration["splits"]["test"]["calibrated"]["ece"]


def raw_key(name: str) -> bool:
    return "_" in name or "." in name


@pytest.fixture(scope="module")
def root_with_an_all_split(model_root, tmp_path_factory):
    """The fixture models with what the shipped sentiment metrics.json also has: an `all` row with folds, no labels."""
    root = tmp_path_factory.mktemp("models")
    shutil.copytree(model_root, root, dirs_exist_ok=True)
    path = root / "sentiment" / "metrics.json"
    metrics = json.loads(path.read_text(encoding="utf-8"))
    metrics["data"]["counts"]["all"] = {"total": 11478, "folds": 10}
    path.write_text(json.dumps(metrics), encoding="utf-8")
    return root


@pytest.mark.parametrize("task", ["translate", "sentiment"])
def test_card_tables_have_no_empty_cells_or_raw_keys(open_page, root_with_an_all_split, task):
    at = card(open_page, task, root=root_with_an_all_split)
    header = (root_with_an_all_split / task / "metrics.csv").read_text(encoding="utf-8").splitlines()[0]
    curve = set(header.split(","))
    shown = [d.value for d in at.dataframe if set(d.value.columns) != curve]  # metrics.csv itself: the raw file
    assert len(shown) >= 3
    for frame in shown:
        assert frame.notna().all().all(), frame.to_dict()
        assert not [c for c in frame.columns if raw_key(str(c))], list(frame.columns)
        cells = {str(v) for v in frame.to_numpy().ravel()}
        assert not cells & {"None", "nan", "NaN", "<NA>"}, frame.to_dict()
    for key in ("vocab_size", "d_model", "n_heads", "pre_norm", "max_len", "tfidf_lr", "nbsvm"):
        assert key not in " ".join(values(at.markdown) + values(at.caption)), key


def test_card_states_the_parity_tolerance(open_page, model_root):
    at = card(open_page, "translate")
    report = json.loads((model_root / "translate" / "onnx" / "export_report.json").read_text(encoding="utf-8"))
    (atol,) = {g["atol"] for g in report["graphs"] if g["precision"] == "fp32"}
    text = " ".join(values(at.markdown) + values(at.caption))
    assert f"{atol:g}" in text and "tolerance" in text
    assert "int8" in text and "not enforced" in text


@pytest.mark.parametrize(("task", "limit"), [("translate", "max_src_len"), ("sentiment", "max_len")])
def test_card_explains_the_positional_table_against_the_input_limit(open_page, model_root, task, limit):
    at = card(open_page, task)
    config = json.loads((model_root / task / "config.json").read_text(encoding="utf-8"))
    positions, cut = config["config"]["max_len"], config["meta"][limit]
    assert positions != cut  # the tiny models: 64 positions, inputs cut at 48 tokens
    text = " ".join(values(at.markdown) + values(at.caption))
    assert f"{positions} positions" in text and f"{cut} tokens" in text


@pytest.mark.parametrize("task", ["translate", "sentiment"])
def test_card_speaks_to_the_reader_not_to_the_project(open_page, task):
    text = page_text(card(open_page, task)).lower()
    for phrase in ("issue", "worth its cost", "has to beat"):
        assert phrase not in text, phrase


# ---------------------------------------------------------------- finding 8: the CUDA sentence

PLAIN_CUDA = "Running on the CPU: CUDA is not available on this machine."


@pytest.mark.parametrize("page", [None, "translate", "sentiment", "attention", "latency"])
def test_every_page_says_cuda_is_unavailable_in_one_plain_sentence(open_page, page):
    at = open_page(page)
    clean(at)
    reason = providers.cuda_unavailable_reason()
    found = list(strings(at._tree))
    if reason is None:  # CUDA runs here: nothing to say
        assert not any(PLAIN_CUDA in text for text, _ in found)
        return
    plain = [text for text, inside in found if PLAIN_CUDA in text and not inside]
    assert len(plain) == 1 and "pip install -r requirements-gpu.txt" in plain[0], plain
    raw = [inside for text, inside in found if reason in text]
    assert raw and all(raw), "the loader's own words only on demand (in an expander)"


def test_translate_asked_for_cuda_says_so_plainly(open_page):
    reason = providers.cuda_unavailable_reason()
    if reason is None:
        pytest.skip("CUDA runs on this machine")
    at = open_page("translate")
    at.selectbox(key="translate_provider").select("cuda").run()
    clean(at)
    (warning,) = values(at.warning)
    assert warning.startswith("CUDA was asked for, but it is not available on this machine") and "CPU instead" in \
        warning and "requirements-gpu.txt" in warning and reason not in warning
    assert all(inside for text, inside in strings(at._tree) if reason in text)
