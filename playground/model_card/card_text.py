"""A model directory's files in the Model card's words and tables: the architecture, the positional table against
the input limit, the training curves' columns, the README's sections, the baselines and calibration tables, and the
one-line summary Home lists. No Streamlit here."""
from __future__ import annotations

import re
from typing import Any

import pandas as pd

from runtime import metrics_file, text

BASELINES = {"tfidf_lr": "TF-IDF + logistic regression", "nbsvm": "NB-SVM"}


def filled(frame: pd.DataFrame, missing: str = "—") -> pd.DataFrame:
    """The frame with no empty cell (a browser shows None): the columns with gaps as text, `missing` in the gaps,
    whole numbers without a trailing .0 (pandas makes a column with a gap float)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].isna().any():
            out[column] = [missing if pd.isna(v) else f"{v:.0f}" if isinstance(v, float) and v.is_integer()
                           else str(v) for v in out[column]]
    return out


def architecture(config: dict[str, Any]) -> list[str]:
    """The config in words (config.json's keys are the code's names)."""
    parts = []
    if "vocab_size" in config:
        parts.append(f"vocabulary of {config['vocab_size']:,} subword tokens")
    if "d_model" in config:
        parts.append(f"model width {config['d_model']}")
    if "n_heads" in config:
        parts.append(f"{config['n_heads']} attention heads")
    if "n_layers" in config:
        decoder = config.get("n_decoder_layers")
        parts.append(f"{config['n_layers']} encoder layers" + (f" + {decoder} decoder layers" if decoder else ""))
    if "d_ff" in config:
        parts.append(f"feed-forward width {config['d_ff']:,}")
    if "max_len" in config:
        parts.append(f"{config['max_len']} positions")
    if "pre_norm" in config:
        parts.append("layer norm before each sub-layer (pre-LN)" if config["pre_norm"] else
                     "layer norm after each sub-layer (post-LN, as in the paper)")
    if config.get("pooling"):
        parts.append(f"{config['pooling']} pooling over the tokens")
    return parts


def architecture_line(config: dict[str, Any], params: int | None) -> str:
    return " · ".join(architecture(config)) + (f" · **{params:,} parameters**" if params else "")


def positions_note(task: str, positions: int, meta: dict[str, Any]) -> str:
    """Why the positional table is longer than (or as long as) the input the model reads."""
    if task == "translate":
        cut = min(int(meta.get("max_src_len", text.DEFAULT_MAX_SRC_LEN)), positions)
        return (f"The positional table has **{positions} positions**: no sequence inside the model can be longer. "
                f"The text to translate is cut at **{cut} tokens** (the target-language tag and the end mark "
                f"included), the length the model was trained with"
                + (f"; the translation it writes may run on up to the {positions} positions." if cut < positions
                   else "."))
    cut = min(int(meta.get("max_len", text.DEFAULT_MAX_SRC_LEN)), positions)
    if cut < positions:
        return (f"The positional table has **{positions} positions**, but a review is cut at **{cut} tokens**, the "
                f"length the model was trained with: the positions after {cut} are never used.")
    return f"The positional table has **{positions} positions**, and a review is cut at **{cut} tokens** to fit it."


# ---------------------------------------------------------------- metrics.csv, the training curves

def metric_name(column: str, values: pd.Series) -> str:
    """A metrics.csv score column as its metric's name: valid_bleu -> BLEU, valid_accuracy -> accuracy %."""
    for pattern, name in ((r"bleu", "BLEU"), (r"chrf", "chrF"), (r"f1", "macro-F1"), (r"acc", "accuracy")):
        if re.search(pattern, column, re.IGNORECASE):
            if name in ("macro-F1", "accuracy"):  # a share (0-1) or percent, as the file has it
                return f"{name} %" if pd.to_numeric(values, errors="coerce").max() > 1 else name
            return name
    return column.replace("_", " ")


def curve_columns(curve: pd.DataFrame) -> tuple[str, list[str], list[str], str]:
    """(the x axis, the loss columns, the score columns, the scores' metric names joined) of a metrics.csv."""
    x = next((c for c in ("step", "steps", "epoch") if c in curve.columns), curve.columns[0])
    numeric = [c for c in curve.columns if c != x and pd.to_numeric(curve[c], errors="coerce").notna().any()]
    losses = [c for c in numeric if "loss" in c.lower()]
    scores = [c for c in numeric if re.search(r"bleu|chrf|acc|f1", c, re.IGNORECASE)]
    names = " and ".join(dict.fromkeys(metric_name(c, curve[c]) for c in scores))
    return x, losses, scores, names


# ---------------------------------------------------------------- metrics.json (runtime/metrics_file.py)

def test_rows(metrics: metrics_file.ModelMetrics) -> list[dict[str, Any]]:
    """The test split's scores: per direction for the translator, one row for the classifier."""
    test = metrics.test
    if isinstance(test, metrics_file.TranslationScores):
        return [{"direction": name, "BLEU": s.bleu, "chrF": s.chrf, "sentences": test.sentences}
                for name, s in test.directions.items()]
    return [{"accuracy %": test.accuracy, "macro-F1 %": test.macro_f1, "reviews": test.reviews}]


def bleu_signature(metrics: metrics_file.ModelMetrics) -> str | None:
    test = metrics.test
    if not isinstance(test, metrics_file.TranslationScores):
        return None
    return next(iter(test.directions.values())).extra.get("bleu_signature")


# ---------------------------------------------------------------- the README (the model card as shipped)

def readme_sections(readme: str) -> list[tuple[str, str]]:
    """README.md as (heading, body) pairs; text before the first heading has heading ""."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    in_code = False
    for line in readme.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"^#{1,4}\s+(.*)", line)
        if match:
            sections.append((match.group(1).strip(), []))
        else:
            sections[-1][1].append(line)
    return [(h, "\n".join(body).strip()) for h, body in sections if h or "\n".join(body).strip()]


def readme_parts(sections: list[tuple[str, str]], pattern: str) -> list[tuple[str, str]]:
    """The sections whose heading matches `pattern` (e.g. data and licence, limitations)."""
    return [(h, body) for h, body in sections if h and re.search(pattern, h, re.IGNORECASE)]


def default_limitations(task: str) -> str:
    """What the card says when the README names no limitations."""
    return ("- Trained on 2 CPU cores with a small budget: expect mistakes on long or idiomatic input.\n"
            + ("- Domain: dictionary example sentences (Ding), not news or web text."
               if task == "translate" else "- Domain: short movie-review snippets (Rotten Tomatoes)."))


# ---------------------------------------------------------------- Home's one line per model

def parameters_words(params: int) -> str:
    return f"{params / 1e6:.1f}M parameters" if params >= 1e5 else f"{params / 1e3:.1f}k parameters"


def card_line(title: str, data: str | None, params: int | None, metrics: metrics_file.ModelMetrics | None,
              metrics_problem: str | None, opset: str | None) -> str:
    """One line: task (title with its directions or labels), data, parameters, test metric, opset
    (`ExportReport.opset_words()`, None when not exported)."""
    parts = [title, f"data: {data or 'not recorded (see the model card)'}"]
    if params:
        parts.append(parameters_words(params))
    if metrics:
        parts.append(f"test {metrics.test.headline()}")
    else:
        parts.append("test metrics unreadable (see the Model card)" if metrics_problem else
                     "test metrics not recorded yet")
    parts.append(opset or "not exported to ONNX")
    return " · ".join(parts)
