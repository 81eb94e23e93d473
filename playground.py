"""What the Streamlit pages share: where the models are, loading them once per process, reading
their cards, turning every failure into a friendly message, and the plotly figures.

Pages (`app.py`, `pages/*.py`) stay short flat scripts over this module and the inference API
(`export.runtime`; PyTorch through `tx.inference` on the Latency page). No model code here.

The model root is `models/` unless the environment variable TX_MODELS_DIR names another one
(the tests point it at tiny exported models). Each task lives in `<root>/<task>/`.
"""
from __future__ import annotations

import csv
import gc
import io
import json
import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from export import ModelLoadError, OnnxSentimentClassifier, OnnxTranslator, ProviderError
from tx import CheckpointError, PositionalEncoding, data, read_model_config
from tx.metrics_file import METRICS_FILE, MetricsFormatError, ModelMetrics

MODELS_ENV = "TX_MODELS_DIR"
TASKS = ("translate", "sentiment")
TASK_TITLES = {"translate": "Translation", "sentiment": "Sentiment"}
TASK_NOUNS = {"translate": "translation", "sentiment": "sentiment"}
PROVIDERS = ("auto", "cpu", "cuda")
PRECISIONS = ("fp32", "int8")
MAX_LINES = 200  # lines per batch request: more waits too long in a browser
MEAN = "average"  # the layer/head choice that averages instead of picking one
LANGUAGES = {"de": "German", "en": "English"}

# Used when a model directory has no samples.tsv.
BUILTIN_EXAMPLES = {
    "de": ["Ich trinke keinen Alkohol.", "Kannst du Auto fahren?", "Das Wetter ist heute schön.",
           "Wo ist die nächste Apotheke?", "Ich verstehe nicht, was du meinst.",
           "Könnten Sie bitte etwas langsamer sprechen?"],
    "en": ["I do not drink alcohol.", "Can you drive a car?", "The weather is nice today.",
           "Where is the nearest pharmacy?", "I do not understand what you mean.",
           "Could you please speak a little more slowly?"],
    "review": ["a gem of a film, warm and funny", "dull, slow and far too long",
               "the best thing I have seen this year", "a mess of a script and wooden acting"],
}


# The pages in sidebar order: (script, label, icon). Streamlit's own list is off (.streamlit/config.toml)
# because it would call the home page "app".
PAGES = [("app.py", "Home", ":material/home:"),
         ("pages/1_Translate.py", "Translate", ":material/translate:"),
         ("pages/2_Sentiment.py", "Sentiment", ":material/sentiment_satisfied:"),
         ("pages/3_Attention_explorer.py", "Attention explorer", ":material/grid_on:"),
         ("pages/4_Latency.py", "Latency", ":material/timer:"),
         ("pages/5_Model_card.py", "Model card", ":material/description:")]


def page_setup(title: str, icon: str) -> None:
    """set_page_config + the sidebar's page list: the first lines of every page."""
    st.set_page_config(page_title=f"{title} · Transformer playground" if title != "Home" else "Transformer playground",
                       page_icon=icon, layout="wide")
    with st.sidebar:
        for script, label, page_icon in PAGES:
            st.page_link(script, label=label, icon=page_icon)
        st.divider()


# ---------------------------------------------------------------- where the models are

def models_root() -> Path:
    return Path(os.environ.get(MODELS_ENV) or "models")


def model_dir(task: str) -> Path:
    return models_root() / task


def create_hint(task: str) -> str:
    d = model_dir(task)
    return (f"`make run` exports the shipped models and starts this app; to train your own: "
            f"`python -m tx.train {task}`, then `python -m export {d}`.")


def model_problem(task: str) -> str | None:
    """Why the task's ONNX model cannot serve (a message naming the fixing command), or None."""
    d = model_dir(task)
    noun = TASK_NOUNS[task]
    if not (d / "config.json").is_file():
        return f"No {noun} model found in `{d}`. {create_hint(task)}"
    if not (d / "onnx" / "export_report.json").is_file():
        return (f"The {noun} model in `{d}` is not exported to ONNX yet: run `python -m export {d}` "
                f"(`make run` does it for the shipped models).")
    return None


def stamp(task: str, *names: str) -> tuple[int, ...]:
    """Changes whenever the model, its export, or the named files of its directory change: a cache key."""
    d = model_dir(task)
    files = [d / "config.json", d / "model.pt", d / "tokenizer.json", d / "onnx" / "export_report.json",
             *(d / name for name in names)]
    return tuple(p.stat().st_mtime_ns if p.exists() else 0 for p in files)


def model_meta(task: str) -> dict[str, Any]:
    try:
        return read_model_config(model_dir(task))
    except CheckpointError:
        return {"kind": "?", "config": {}, "meta": {}}


def directions(task: str = "translate") -> list[tuple[str, str]]:
    found = model_meta(task)["meta"].get("directions") or [["de", "en"], ["en", "de"]]
    return [(str(s), str(t)) for s, t in found]


def direction_label(direction: tuple[str, str]) -> str:
    return f"{direction[0].upper()} → {direction[1].upper()}"


# ---------------------------------------------------------------- loading, once per process

def freeze_heap() -> None:
    """Move every object alive now out of the garbage collector's sight (gc.freeze).

    torch, plotly, pandas, streamlit and the models make a heap where one full collection took
    ~440 ms (measured here, in the middle of drawing a figure after a translation): the browser
    round trip doubled whenever one struck. Modules and loaded models live as long as the
    process, so scanning them again and again finds nothing; freezing them keeps collections short.
    """
    gc.collect()
    gc.freeze()


freeze_heap()  # the imports above (torch, plotly, pandas, streamlit, onnxruntime)


@st.cache_resource(show_spinner=False, max_entries=24)
def _onnx_model(task: str, path: str, provider: str, precision: str, threads: int | None, version: tuple):
    cls = OnnxTranslator if task == "translate" else OnnxSentimentClassifier
    model = cls(path, provider=provider, precision=precision, threads=threads)
    freeze_heap()
    return model


@st.cache_resource(show_spinner=False, max_entries=4)
def _torch_model(task: str, path: str, version: tuple):
    from tx.inference import SentimentAnalyzer, Translator

    model = (Translator if task == "translate" else SentimentAnalyzer).from_dir(path)
    freeze_heap()
    return model


def onnx_model(task: str, provider: str = "auto", precision: str = "fp32", threads: int | None = None,
               quiet: bool = False):
    """The task's onnxruntime wrapper, or None after telling the user why not.

    A provider that was asked for but cannot run gives a warning with the reason and the CPU instead."""
    problem = model_problem(task)
    if problem:
        if not quiet:
            st.error(problem)
        return None
    try:
        with st.spinner(f"Loading the {TASK_NOUNS[task]} model ({precision}, {provider})…"):
            return _onnx_model(task, str(model_dir(task)), provider, precision, threads, stamp(task))
    except ProviderError as e:
        if not quiet:
            st.warning(f"{e}. Running on the CPU instead.")
        return onnx_model(task, "cpu", precision, threads, quiet)
    except Exception as e:  # ModelLoadError names the file and the fixing command
        if not quiet:
            show_error(e, task)
        return None


def load_problem(task: str) -> str | None:
    """Why the task's exported model does not load (its files really opened, not just its config read), or None.

    Home uses it: a model whose config is fine but whose ONNX or tokenizer file is corrupt or missing is not
    healthy, and must not be listed as if it were."""
    problem = model_problem(task)
    if problem:
        return problem
    try:
        _onnx_model(task, str(model_dir(task)), "cpu", "fp32", None, stamp(task))
    except Exception as e:
        return f"The {TASK_NOUNS[task]} model does not load: {first_line(e)}"
    return None


def torch_model(task: str):
    """The PyTorch wrapper (Latency page), or None after a warning."""
    try:
        with st.spinner(f"Loading the PyTorch {TASK_NOUNS[task]} model…"):
            return _torch_model(task, str(model_dir(task)), stamp(task))
    except Exception as e:
        st.warning(f"PyTorch model not available, so it is left out: {first_line(e)}")
        return None


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:500] if text else type(e).__name__


def show_error(e: BaseException, task: str | None = None) -> None:
    """Any failure as a message a user can act on: never a traceback."""
    if isinstance(e, ProviderError):
        st.warning(f"Execution provider problem: {first_line(e)}")
    elif isinstance(e, ModelLoadError | CheckpointError):
        # The message names the file and its fix (restore it, or re-export); "train your own" would mislead here.
        st.error(f"The model cannot be loaded: {first_line(e)}.")
    elif isinstance(e, ValueError) and str(e).startswith("empty text"):
        st.info("Nothing to work on: type some text (or pick an example) first.")
    elif isinstance(e, ValueError):
        st.warning(first_line(e))
    else:
        st.error(f"Something went wrong ({type(e).__name__}): {first_line(e)}")


def provider_caption(model) -> None:
    st.caption(f"onnxruntime on **{model.provider}** · {model.precision}")
    if model.provider_note:
        st.caption(model.provider_note)


# ---------------------------------------------------------------- text in

def visible(text: str) -> bool:
    """Whether the text holds anything a reader can see: a line of zero-width spaces, joiners, BOMs or other
    format characters (Unicode category Cf) is as empty as a blank one, and must not be translated into words."""
    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in text)


def split_lines(text: str | None) -> list[str]:
    """Non-empty lines, stripped; over MAX_LINES are dropped with a notice."""
    lines = [line.strip() for line in (text or "").splitlines() if visible(line)]
    if len(lines) > MAX_LINES:
        st.warning(f"{len(lines)} lines given: only the first {MAX_LINES} are processed.")
        lines = lines[:MAX_LINES]
    return lines


def read_tsv(path: Path) -> list[dict[str, str]]:
    """tx.data's reader; a missing or broken file reads as no rows (the page shows built-in examples)."""
    try:
        return data.read_tsv(path)
    except (data.DataError, OSError, csv.Error):
        return []


@st.cache_data(show_spinner=False, max_entries=16)
def _samples(task: str, version: tuple) -> list[dict[str, str]]:
    return read_tsv(model_dir(task) / "samples.tsv")


def examples(task: str, column: str, limit: int = 12) -> list[str]:
    """Example texts from the model's samples.tsv (test-set sentences), else a built-in list.

    column: "de"/"en" for translation sources, "text" for reviews."""
    rows = _samples(task, stamp(task, "samples.tsv"))
    found = [r[column].strip() for r in rows if (r.get(column) or "").strip()]
    seen: list[str] = []
    for text in found:
        if text not in seen:
            seen.append(text)
    if seen:
        return seen[:limit]
    return BUILTIN_EXAMPLES.get(column if column in ("de", "en") else "review", BUILTIN_EXAMPLES["review"])


@st.cache_data(show_spinner=False, max_entries=16)
def _curated(task: str, version: tuple) -> list[dict[str, str]]:
    return read_tsv(model_dir(task) / "examples.tsv")


def curated_examples(src: str, tgt: str) -> list[dict[str, str]]:
    """Starting examples for a direction: the model dir's `examples.tsv` (direction, source, output, verdict,
    note), sentences whose output was judged by hand, those it gets right first, then those it fails, so a
    visitor sees both; without that file, test-set sentences with no verdict."""
    rows = [r for r in _curated("translate", stamp("translate", "examples.tsv"))
            if r.get("direction") == f"{src}-{tgt}" and (r.get("source") or "").strip()]
    rows.sort(key=lambda r: r.get("verdict") != "works")  # stable: the file's order inside each group
    return rows or [{"source": text, "verdict": ""} for text in examples("translate", src)]


def verdict_label(row: dict[str, str]) -> str:
    """"✓ text" / "✗ text (why)" for the example picker."""
    verdict, note = row.get("verdict"), row.get("note")
    if verdict == "works":
        return f"✓ {row['source']}"
    if verdict == "fails":
        return f"✗ {row['source']}" + (f" ({note})" if note else "")
    return row["source"]


def texts_from_csv(data: bytes) -> list[str]:
    """The `text` column of an uploaded CSV (else its last column); raises ValueError when unreadable.

    A file whose header is one name without a comma ("text") is a list, one text per line: its lines
    may hold unquoted commas ("warm, funny and smart"), which a CSV parser would split into fields."""
    try:
        decoded = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"cannot read the uploaded file: it is not UTF-8 text ({e.reason})") from e
    lines = decoded.splitlines()
    if lines and "," not in lines[0] and '"' not in decoded:
        texts = [t.strip() for t in lines[1:] if visible(t)]
        if not texts:
            raise ValueError("the uploaded CSV has no rows")
        return texts
    try:
        frame = pd.read_csv(io.StringIO(decoded), dtype=str, keep_default_na=False)
    except Exception as e:
        raise ValueError(f"cannot read the uploaded CSV: {first_line(e)}") from e
    if frame.empty:
        raise ValueError("the uploaded CSV has no rows")
    lower = {c.lower().strip(): c for c in frame.columns}
    column = lower.get("text") or lower.get("review") or lower.get("sentence") or frame.columns[-1]
    return [t.strip() for t in frame[column].astype(str) if visible(t)]


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet runs as a formula (CSV injection)


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The table as CSV, every text cell that a spreadsheet would evaluate ("=1+1", "@SUM(...)") prefixed with
    an apostrophe, so opening the download never runs what a user typed (OWASP's advice)."""
    safe = frame.copy()
    for column in safe.columns:
        if any(isinstance(v, str) for v in safe[column]):
            safe[column] = [f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_START) else v
                            for v in safe[column]]
    return safe.to_csv(index=False).encode("utf-8")


# ---------------------------------------------------------------- model cards

def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """{"a.b.c": scalar} for every scalar leaf of nested dicts (lists of scalars joined)."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(obj, list):
        if all(isinstance(v, str | int | float | bool) or v is None for v in obj):
            out[prefix] = ", ".join(str(v) for v in obj)
    elif obj is not None:
        out[prefix] = obj
    return out


def model_metrics(task: str) -> tuple[ModelMetrics | None, str | None]:
    """(the task's metrics.json read through its one schema, None) or (None, why not: missing or wrong layout)."""
    path = model_dir(task) / METRICS_FILE
    if not path.is_file():
        return None, None
    try:
        return ModelMetrics.read(path), None
    except MetricsFormatError as e:
        return None, f"{e} (the layout `python -m tx.ship` writes: see tx/metrics_file.py)"


@st.cache_data(show_spinner=False, max_entries=8)
def parameter_count(task: str, version: tuple) -> int | None:
    """Parameters in model.pt (tied weights counted once)."""
    import torch

    try:
        state = torch.load(model_dir(task) / "model.pt", map_location="cpu", weights_only=True, mmap=True)
    except Exception:
        return None
    seen, total = set(), 0
    tensors = [t for t in state.values() if isinstance(t, torch.Tensor)] if isinstance(state, dict) else []
    for tensor in tensors:
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        if key not in seen:
            seen.add(key)
            total += tensor.numel()
    return total or None


def export_report(task: str) -> dict[str, Any] | None:
    return read_json(model_dir(task) / "onnx" / "export_report.json")


def bench_results(task: str) -> dict[str, Any] | None:
    """The latest `python -m export.bench` output for the task (MODEL_DIR/onnx/bench.json)."""
    found = read_json(model_dir(task) / "onnx" / "bench.json")
    if isinstance(found, list):  # a --json file holding several models
        found = next((b for b in found if b.get("task") == task), None)
    return found if isinstance(found, dict) and found.get("results") else None


def data_source(task: str) -> str | None:
    metrics, _ = model_metrics(task)
    return metrics.data.describe() if metrics else None


def card_line(task: str) -> str:
    """One line: task, data, parameters, test metric, opset."""
    stored = model_meta(task)
    meta = stored["meta"]
    parts = [f"**{TASK_TITLES[task]}**"]
    if task == "translate":
        parts[0] += f" ({', '.join(direction_label(x) for x in directions())})"
    else:
        parts[0] += f" ({' / '.join(meta.get('labels', []))})"
    parts.append(f"data: {data_source(task) or 'not recorded (see the model card)'}")
    params = parameter_count(task, stamp(task, "metrics.json"))
    if params:
        parts.append(f"{params / 1e6:.1f}M parameters" if params >= 1e5 else f"{params / 1e3:.1f}k parameters")
    metrics, problem = model_metrics(task)
    if metrics:
        parts.append(f"test {metrics.test.headline()}")
    else:
        parts.append("test metrics unreadable (see the Model card)" if problem else "test metrics not recorded yet")
    report = export_report(task)
    if report:
        parts.append(f"ONNX opset {report.get('opset', '?')}" + ("" if report.get("ok") else " (export FAILED)"))
    else:
        parts.append("not exported to ONNX")
    return " · ".join(parts)


def readme_sections(task: str) -> list[tuple[str, str]]:
    """README.md (the model card) as (heading, body) pairs; text before the first heading has heading ""."""
    try:
        text = (model_dir(task) / "README.md").read_text(encoding="utf-8")
    except OSError:
        return []
    sections: list[tuple[str, list[str]]] = [("", [])]
    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"^#{1,4}\s+(.*)", line)
        if match:
            sections.append((match.group(1).strip(), []))
        else:
            sections[-1][1].append(line)
    return [(h, "\n".join(body).strip()) for h, body in sections if h or "\n".join(body).strip()]


# ---------------------------------------------------------------- attention and plots

def pick_map(weights: list[np.ndarray], layer: Any, head: Any) -> np.ndarray:
    """L × (H, T, S) -> (T, S): one layer (1-based) or the average, one head (1-based) or the average."""
    stack = np.stack([np.asarray(w, dtype=np.float32) for w in weights])  # (L, H, T, S)
    chosen = stack.mean(axis=0) if layer == MEAN else stack[int(layer) - 1]
    return chosen.mean(axis=0) if head == MEAN else chosen[int(head) - 1]


def choice_label(value: Any, noun: str) -> str:
    return f"average of all {noun}s" if value == MEAN else f"{noun} {value}"


def plotly_text(token: str) -> str:
    """A token as plotly label text: plotly reads a subset of HTML, so `</s>` would vanish."""
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _axis(tokens: list[str]) -> dict[str, Any]:
    # Positions on the axis, tokens as tick labels: repeated tokens must not merge into one category.
    return {"tickmode": "array", "tickvals": list(range(len(tokens))), "ticktext": [plotly_text(t) for t in tokens],
            "tickangle": -45}


MARGIN = {"l": 10, "r": 10, "t": 50, "b": 10}
# Figures on the hot path are plain dicts: st.plotly_chart validates a dict in ~5 ms, while building
# the same go.Figure with update_layout took ~22 ms per figure (measured), a sixth of a round trip.
Figure = dict[str, Any]


def heatmap(z: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str, x_title: str,
            y_title: str) -> Figure:
    z = np.asarray(z, dtype=np.float32)
    x_text, y_text = [plotly_text(t) for t in x_tokens], [plotly_text(t) for t in y_tokens]
    hover = [[f"{y_text[i]} → {x_text[j]}" for j in range(len(x_tokens))] for i in range(len(y_tokens))]
    trace = {"type": "heatmap", "z": z, "x": list(range(len(x_tokens))), "y": list(range(len(y_tokens))),
             "zmin": 0, "colorscale": "Blues", "customdata": hover,
             "hovertemplate": "%{customdata}<br>weight %{z:.3f}<extra></extra>"}
    layout = {"title": {"text": title}, "height": min(900, max(320, 22 * len(y_tokens) + 160)), "margin": MARGIN,
              "xaxis": {**_axis(x_tokens), "title": {"text": x_title}},
              "yaxis": {**_axis(y_tokens), "title": {"text": y_title}, "autorange": "reversed", "tickangle": 0}}
    return {"data": [trace], "layout": layout}


def heads_grid(maps: np.ndarray, x_tokens: list[str], y_tokens: list[str], title: str) -> go.Figure:
    """(H, T, S) -> one small heatmap per head, one colour scale; token labels on the outer axes only."""
    heads = maps.shape[0]
    cols = min(4, heads)
    rows = -(-heads // cols)
    labelled = len(x_tokens) <= 24 and len(y_tokens) <= 24
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"head {h + 1}" for h in range(heads)],
                        horizontal_spacing=0.02, vertical_spacing=0.14 if labelled else 0.06)
    zmax = float(maps.max()) if maps.size else 1.0
    for h in range(heads):
        fig.add_trace(go.Heatmap(z=maps[h], zmin=0, zmax=zmax, colorscale="Blues", showscale=(h == 0),
                                 hovertemplate="query %{y}, key %{x}: %{z:.3f}<extra></extra>"),
                      row=h // cols + 1, col=h % cols + 1)
    for h in range(heads):
        row, col = h // cols + 1, h % cols + 1
        bottom = row == rows or h + cols >= heads  # nothing below this one
        fig.update_xaxes(_axis(x_tokens) if labelled and bottom else {"showticklabels": False}, row=row, col=col)
        fig.update_yaxes({**_axis(y_tokens), "tickangle": 0} if labelled and col == 1 else {"showticklabels": False},
                         row=row, col=col)
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title=title, height=(320 if labelled else 260) * rows + 80, margin={**MARGIN, "t": 70})
    return fig


def bar(labels: list[str], values: list[float], title: str, y_title: str) -> Figure:
    trace = {"type": "bar", "x": list(range(len(labels))), "y": list(values), "marker": {"color": "#1f77b4"},
             "customdata": [plotly_text(t) for t in labels], "hovertemplate": "%{customdata}: %{y:.3f}<extra></extra>"}
    layout = {"title": {"text": title}, "height": 340, "margin": MARGIN, "xaxis": _axis(labels),
              "yaxis": {"title": {"text": y_title}}}
    return {"data": [trace], "layout": layout}


def attention_received(weights: list[np.ndarray], layer: Any) -> np.ndarray:
    """How much attention each token receives: a (H, S, S) map averaged over heads and query rows."""
    return pick_map(weights, layer, MEAN).mean(axis=0)


@st.cache_data(show_spinner=False, max_entries=8)
def positional_encoding(d_model: int, positions: int) -> np.ndarray:
    """tx.PositionalEncoding's sinusoid table (positions × dimensions)."""
    return PositionalEncoding(d_model, positions).pe.numpy()


def positional_figures(d_model: int, positions: int) -> tuple[Figure, Figure]:
    pe = positional_encoding(d_model, positions)
    unit = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    fig_pe = {"data": [{"type": "heatmap", "z": pe, "colorscale": "RdBu", "zmid": 0,
                        "hovertemplate": "position %{y}, dimension %{x}: %{z:.3f}<extra></extra>"}],
              "layout": {"title": {"text": f"PE(pos, i): {positions} positions × {d_model} dimensions"},
                         "height": 420, "margin": MARGIN, "xaxis": {"title": {"text": "dimension i"}},
                         "yaxis": {"title": {"text": "position"}, "autorange": "reversed"}}}
    fig_sim = {"data": [{"type": "heatmap", "z": unit @ unit.T, "colorscale": "Viridis",
                         "hovertemplate": "positions %{y} and %{x}: cosine %{z:.3f}<extra></extra>"}],
               "layout": {"title": {"text": "Position similarity: cosine of PE(p) and PE(q)"}, "height": 420,
                          "margin": MARGIN, "xaxis": {"title": {"text": "position q"}},
                          "yaxis": {"title": {"text": "position p"}, "autorange": "reversed"}}}
    return fig_pe, fig_sim


def curves(frame: pd.DataFrame, columns: list[str], title: str, x: str) -> go.Figure:
    fig = go.Figure()
    for column in columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        fig.add_trace(go.Scatter(x=frame[x] if x in frame else frame.index, y=values, mode="lines+markers",
                                 name=column))
    fig.update_layout(title=title, height=340, xaxis_title=x, margin=MARGIN)
    return fig


def reliability_figure(split: dict[str, Any], name: str) -> go.Figure:
    """Reliability diagram of one split of `calibration.json` (tx.calibration): per confidence bin, how often
    the label was right, before and after temperature scaling; on the diagonal a probability means what it says."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0.5, 1.0], y=[0.5, 1.0], mode="lines", name="perfect calibration",
                             line={"dash": "dash", "color": "gray"}))
    for tag, colour in (("uncalibrated", "#d62728"), ("calibrated", "#1f77b4")):
        entry = split.get(tag) or {}
        table = entry.get("reliability") or {}
        columns = zip(table.get("confidence", []), table.get("accuracy", []), table.get("counts", []), strict=False)
        points = [(c, a, n) for c, a, n in columns if c is not None and a is not None]
        if points:
            fig.add_trace(go.Scatter(
                x=[c for c, _, _ in points], y=[a for _, a, _ in points], mode="lines+markers",
                name=f"{tag} (ECE {entry.get('ece', float('nan')):.1f}%)", line={"color": colour},
                marker={"size": [6 + 14 * (n / max(p[2] for p in points)) ** 0.5 for _, _, n in points]},
                customdata=[n for _, _, n in points],
                hovertemplate="confidence %{x:.2f}: right %{y:.0%} of %{customdata} reviews<extra></extra>"))
    fig.update_layout(title=f"Reliability on {name}: accuracy per confidence bin (marker size = reviews)",
                      height=360, margin=MARGIN, xaxis_title="mean confidence in the bin",
                      yaxis_title="share correct", xaxis_range=[0.45, 1.02], yaxis_range=[0.0, 1.02])
    return fig


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    import time

    start = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - start) * 1e3


# --- translation confidence --------------------------------------------------------------------------------------
def confidence_judgement(confidence: float) -> tuple[bool, str]:
    """(low?, a sentence saying what this confidence meant on the model's hand-judged outputs), from the model's
    `confidence.json` (`python -m tx.confidence`); without one, only the number."""
    report = read_json(model_dir("translate") / "confidence.json")
    shown = f"Confidence {confidence:.0%} (geometric mean of the model's token probabilities)"
    try:
        threshold = float(report["threshold"])
        bins = [b for b in report["bins"] if b["from"] <= confidence < b["to"] or confidence >= 1.0 == b["to"]]
    except (TypeError, KeyError, ValueError):
        return False, shown + "."
    judged = report["all"]
    if bins and bins[0]["outputs"]:
        b = bins[0]
        shown += (f": outputs between {b['from']:.0%} and {b['to']:.0%} were right {b['share_right']:.0%} of the "
                  f"time ({b['outputs']} of {judged['outputs']} hand-judged everyday translations)")
    return confidence < threshold, shown + "."
