"""Activation patching on the sentiment classifier: two reviews (e.g. a positive one and its negated twin), the
clean one's activations patched into the corrupted one's run, one position or one head at a time.

    result = classify_patching(model, "a gem of a film, warm and funny", "not a gem of a film, warm and funny")
    result.residual.normalised   # (L + 1, corrupted positions): 1 = the patch restores the clean verdict's margin
    result.heads.normalised      # (L, H): each head patched at every aligned position

The metric is the logit difference between two classes, logit(A) − logit(B) (the calibrated logits the served
classifier returns); by default A is the clean review's label and B the corrupted one's (or, when both get the same
label, the other class the clean review scores highest). Normalised as the translator's:
(patched − corrupted) / (clean − corrupted). Positions align by `patch_common.align` (no tag or </s> here: every
aligned position is text). The graph is `runtime.spec.classifier_patch_graph`.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..model_files import ModelLoadError
from ..onnx_backend import run_plain
from ..spec import EXPERIMENT_PRECISION, classifier_patch_graph
from .classifier import ClassifierExperimentModel, Review
from .patch_common import Alignment, Patch, PatchGrid, Progress, align, chunks
from .patch_grids import point_labels
from .patching import mark


def patch_session(model: ClassifierExperimentModel):
    """The classifier's patching graph (spec, session), opened once per model, or a ModelLoadError."""
    if "classifier_patch" not in model.cache:
        spec = classifier_patch_graph(model.shape)
        path = model.files.path(spec, EXPERIMENT_PRECISION)
        if not path.is_file():
            raise ModelLoadError(f"{path}: no patching graph in this model directory (exported before it existed, or "
                                 f"with --no-experiments); add it with `python -m export {model.files.model_dir} "
                                 f"--if-stale` (`make run` does it)")
        model.cache["classifier_patch"] = (spec, model.files.session(spec, EXPERIMENT_PRECISION, "cpu", None))
    return model.cache["classifier_patch"]


@dataclass(frozen=True)
class ReviewPair:
    clean: Review
    corrupted: Review
    alignment: Alignment
    class_a: int
    class_b: int
    description: str  # the metric in words, for the page
    clean_value: float  # logit(A) − logit(B) of the clean run ...
    corrupted_value: float  # ... and of the corrupted run
    # the clean run's enc_resid (L + 1, S, D) and enc_self (L, H, S, K), at the corrupted run's positions
    values: dict[str, np.ndarray]
    aligned: np.ndarray  # (S,) bool: corrupted positions with a clean counterpart

    @property
    def note(self) -> str | None:
        return self.alignment.note


def run_rows(model: ClassifierExperimentModel, ids: Sequence[int], rows: int, values: dict | None,
             resid_where: np.ndarray | None = None, head_where: np.ndarray | None = None,
             outputs: tuple[str, ...] = ("logits",)) -> list[np.ndarray]:
    """`rows` copies of one input through the patching graph; values / where None: nothing patched."""
    spec, handle = patch_session(model)
    shape, s = model.shape, len(ids)
    layers, h = shape.n_layers, shape.n_heads
    batch = np.repeat(np.array([ids], dtype=np.int64), rows, 0)
    feeds = {"input_ids": batch, "attention_mask": np.ones_like(batch, dtype=bool),
             "resid_value": values["enc_resid"] if values else np.zeros((layers + 1, s, shape.d_model), np.float32),
             "resid_where": np.zeros((rows, layers + 1, s), np.float32) if resid_where is None else resid_where,
             "enc_self_value": values["enc_self"] if values else np.zeros((layers, h, s, shape.head_dim), np.float32),
             "enc_self_where": np.zeros((rows, layers, h, s), np.float32) if head_where is None else head_where}
    return run_plain(handle, feeds, list(outputs))


def class_index(review: Review, label: int | str | None, name: str) -> int | None:
    if label is None:
        return None
    if isinstance(label, str):
        if label not in review.labels:
            raise ValueError(f"class {name} {label!r} is not one of this model's: {', '.join(review.labels)}")
        return review.labels.index(label)
    if not 0 <= int(label) < len(review.labels):
        raise ValueError(f"class {name} {label} is outside 0..{len(review.labels) - 1}")
    return int(label)


def review_pair(model: ClassifierExperimentModel, clean_text: str, corrupted_text: str,
                class_a: int | str | None = None, class_b: int | str | None = None) -> ReviewPair:
    """Classify both reviews, align them, choose the metric, record the clean run's activations. Bad input (empty
    text, the same text twice, nothing aligned, an unknown class) raises ValueError."""
    patch_session(model)
    clean, corrupted = model.review(clean_text), model.review(corrupted_text)
    if clean.ids == corrupted.ids:
        raise ValueError("the two reviews are the same pieces: patching one into the other changes nothing")
    alignment = align(clean.ids, corrupted.ids, clean.pieces, corrupted.pieces, fixed_ends=False,
                      noun="review")
    a = class_index(clean, class_a, "A")
    a = clean.label_index if a is None else a
    b = class_index(clean, class_b, "B")
    if b is None:
        others = [i for i in np.argsort(-clean.probs) if i != a]
        b = corrupted.label_index if corrupted.label_index != a else int(others[0])
    if a == b:
        raise ValueError("classes A and B are the same class: their logit difference is always 0")
    description = f"logit('{clean.labels[a]}') − logit('{clean.labels[b]}')"
    if class_a is None and class_b is None:
        description += ("; by default A is the clean review's label and B the corrupted review's (or the other "
                        "class, when both get the same label)")
    logits, resid, heads = run_rows(model, clean.ids, 1, None, outputs=("logits", "resid", "enc_self_heads"))
    (corrupted_logits,) = run_rows(model, corrupted.ids, 1, None)
    values = {"enc_resid": alignment.lay_out(resid[0], 1), "enc_self": alignment.lay_out(heads[0], 2)}
    aligned = np.zeros(len(corrupted.ids), dtype=bool)
    aligned[alignment.corrupted] = True
    margin = lambda out: float(out[0, a]) - float(out[0, b])
    return ReviewPair(clean, corrupted, alignment, a, b, description, margin(logits), margin(corrupted_logits),
                      values, aligned)


def classify_evaluate(model: ClassifierExperimentModel, pair: ReviewPair, rows: Sequence[Sequence[Patch]],
                      progress: Progress = None) -> np.ndarray:
    """The metric (rows,) with each row's patches (sites "enc_resid", "enc_self") applied together."""
    shape, n, s = model.shape, len(rows), len(pair.corrupted.ids)
    resid_where = np.zeros((n, shape.n_layers + 1, s), np.float32)
    head_where = np.zeros((n, shape.n_layers, shape.n_heads, s), np.float32)
    for r, patches in enumerate(rows):
        for patch in patches:
            if patch.site not in ("enc_resid", "enc_self"):
                raise ValueError(f"the classifier has the sites enc_resid and enc_self, not {patch.site!r}")
            mark((resid_where if patch.site == "enc_resid" else head_where)[r], pair, patch)
    out = np.empty(n, dtype=np.float64)
    parts = chunks(n, (2 * shape.n_layers + 2) * s * shape.d_model)
    for i, part in enumerate(parts):
        (logits,) = run_rows(model, pair.corrupted.ids, len(resid_where[part]), pair.values, resid_where[part],
                             head_where[part])
        out[part] = logits[:, pair.class_a].astype(np.float64) - logits[:, pair.class_b]
        progress and progress(i + 1, len(parts))
    return out


def grid_cells(model: ClassifierExperimentModel, pair: ReviewPair,
               site: str) -> tuple[list[str], list[str], list[list[Patch | None]]]:
    """site "enc_resid": (L + 1) points × corrupted positions (None at left-out positions); "enc_self": layer ×
    head, each head patched at every aligned position. -> (row labels, column labels, cells)."""
    layers, heads = model.shape.n_layers, model.shape.n_heads
    if site == "enc_resid":
        cells = [[Patch(site, p, -1, j) if pair.aligned[j] else None for j in range(len(pair.aligned))]
                 for p in range(layers + 1)]
        clean_at = dict(zip(pair.alignment.corrupted, pair.alignment.clean, strict=True))
        columns = [piece if j not in clean_at or pair.clean.pieces[clean_at[j]] == piece
                   else f"{pair.clean.pieces[clean_at[j]]}→{piece}" for j, piece in enumerate(pair.corrupted.pieces)]
        return point_labels(layers), columns, cells
    if site == "enc_self":
        cells = [[Patch(site, layer, head, -1) for head in range(heads)] for layer in range(layers)]
        return [f"layer {i + 1}" for i in range(layers)], [f"head {h + 1}" for h in range(heads)], cells
    raise ValueError(f"the classifier's grids are enc_resid and enc_self, not {site!r}")


def classify_grids(model: ClassifierExperimentModel, pair: ReviewPair, sites: Sequence[str] = ("enc_resid", "enc_self"),
                   progress: Progress = None) -> dict[str, PatchGrid]:
    """The grids of `sites`, every cell of them in one batched evaluation (one progress count)."""
    start = time.perf_counter()
    laid = {site: grid_cells(model, pair, site) for site in sites}
    flat = [cell for _, _, cells in laid.values() for row in cells for cell in row if cell is not None]
    values = iter(classify_evaluate(model, pair, [[cell] for cell in flat], progress))
    seconds = time.perf_counter() - start
    grids = {}
    for site, (rows, columns, cells) in laid.items():
        raw = np.array([[np.nan if cell is None else next(values) for cell in row] for row in cells])
        grids[site] = PatchGrid(site, rows, columns, raw, cells, pair.clean_value, pair.corrupted_value, seconds,
                                pair.note)
    return grids


@dataclass(frozen=True)
class ClassifierPatching:
    pair: ReviewPair
    residual: PatchGrid  # (L + 1) × corrupted positions
    heads: PatchGrid  # L × H


def classify_patching(model: ClassifierExperimentModel, clean_text: str, corrupted_text: str,
                      class_a: int | str | None = None, class_b: int | str | None = None,
                      progress: Progress = None) -> ClassifierPatching:
    """Both grids for two reviews (`review_pair` for the metric and the checks)."""
    pair = review_pair(model, clean_text, corrupted_text, class_a, class_b)
    grids = classify_grids(model, pair, progress=progress)
    return ClassifierPatching(pair, grids["enc_resid"], grids["enc_self"])
