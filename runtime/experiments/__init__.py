"""Experiments on the translator, from onnxruntime alone (numpy + onnxruntime; no torch): the logit lens,
knocking out attention heads, head importance, and occlusion beside cross-attention.

    from runtime.experiments import ExperimentModel, Head, head_importance, knockout, logit_lens, occlusion
    model = ExperimentModel("models/translate")              # served fp32 translator + the experiment graphs
    sentence = model.sentence("Wo ist der Bahnhof?", "de", "en")  # greedy translation + per-token log-probs
    lens = logit_lens(model, sentence, k=5)                  # top-k after every decoder layer, chosen token's rank
    result = knockout(model, sentence, [Head("dec_cross", 2, 5)], mode="zero")  # or mode="mean"
    grid = head_importance(model, sentence)                  # grid.drop[kind] (L, H): nats lost per head
    occ = occlusion(model, sentence, method="mask")          # occ.row(t): drop per source piece, attention, ρ
    maps = attention_maps(model, sentence)                   # {"enc_self", "dec_self", "dec_cross"}: (L, H, T, S)
    flow = translation_rollout(maps)                         # flow.source (T, S): attention rollout per target token
    curves = deletion_curves(model, sentence, t, {"occlusion": occlusion_order(occ, t)})  # {name: DeletionCurve}

The classifier (runtime.experiments.classifier): ClassifierExperimentModel, .review(text), classify_knockout,
classify_head_importance, classify_occlusion (no logit lens: its output layer reads the pooled text),
classifier_rollout, classifier_deletion_curves.

Every function takes the `ExperimentModel` first and returns a frozen dataclass of numpy arrays and lists; none
keeps state between calls except the reference means, cached on the model (`reference_means`). Heads are
`Head(kind, layer, head)` counted from 0, kind one of HEAD_KINDS ("enc_self", "dec_self", "dec_cross").
Modules: model (sessions, `Sentence`), lens, heads (knock-outs, importance), reference (the mean-ablation set),
occlude (occlusion), rollout (attention rollout), deletion (deletion curves: does an attribution's ranking
predict what deleting the pieces does), patching / patch_grids / classifier_patching (activation patching:
docs/experiments.md "Activation patching"). The graphs are `runtime.spec`'s experiment graphs, made by
`python -m export MODEL_DIR` (and added to an older export by `--if-stale`). docs/experiments.md has the
measurements and the choices made.
"""
from ..spec import HEAD_KINDS
from .classifier import (
    ClassifierExperimentModel,
    ClassifierKnockout,
    ClassifierOcclusion,
    Review,
    classify_head_importance,
    classify_knockout,
    classify_occlusion,
)
from .classifier_patching import ClassifierPatching, ReviewPair, classify_grids, classify_patching, review_pair
from .deletion import (
    DeletionCurve,
    classifier_deletion_curves,
    deletion_curves,
    occlusion_order,
    order_from_scores,
    random_order,
    source_positions,
)
from .heads import (
    KIND_NAMES,
    MODES,
    GatedBackend,
    Head,
    HeadImportance,
    Knockout,
    every_head,
    head_importance,
    knockout,
    reference_sentences,
)
from .lens import LogitLens, logit_lens
from .model import ExperimentModel, Sentence, attention_maps, sentence_from
from .occlude import METHODS as OCCLUSION_METHODS
from .occlude import Occlusion, OcclusionRow, occlusion, spearman
from .patch_common import Alignment, Patch, PatchGrid, align
from .patch_grids import (
    Retranslation,
    decoder_residual_grid,
    encoder_residual_grid,
    head_grid,
    memory_grid,
    retranslate,
)
from .patching import Metric, PatchPair, pair_from, patch_pair, with_patching
from .reference import REFERENCE_PAIRS, REFERENCE_REVIEWS, HeadMeans, reference_means
from .rollout import Rollout, classifier_rollout, encoder_rollout, translation_rollout

__all__ = [
    "ExperimentModel", "Sentence", "sentence_from", "attention_maps", "HEAD_KINDS", "KIND_NAMES", "MODES", "Head",
    "logit_lens", "LogitLens", "knockout", "Knockout", "GatedBackend", "head_importance", "HeadImportance",
    "every_head", "reference_sentences", "reference_means", "HeadMeans", "REFERENCE_PAIRS",
    "occlusion", "Occlusion", "OcclusionRow", "OCCLUSION_METHODS", "spearman",
    "ClassifierExperimentModel", "Review", "classify_knockout", "ClassifierKnockout", "classify_head_importance",
    "classify_occlusion", "ClassifierOcclusion", "REFERENCE_REVIEWS",
    "patch_pair", "pair_from", "PatchPair", "Metric", "Patch", "PatchGrid", "Alignment", "align", "with_patching",
    "encoder_residual_grid", "decoder_residual_grid", "head_grid", "memory_grid", "retranslate", "Retranslation",
    "classify_patching", "ClassifierPatching", "review_pair", "ReviewPair", "classify_grids",
    "translation_rollout", "classifier_rollout", "encoder_rollout", "Rollout",
    "deletion_curves", "classifier_deletion_curves", "DeletionCurve", "source_positions", "order_from_scores",
    "random_order", "occlusion_order",
]
