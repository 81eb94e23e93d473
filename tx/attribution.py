"""Gradient attribution for one output: which input tokens a translator's output token (or a classifier's logit)
came from, by saliency, input × gradient and integrated gradients (Sundararajan et al. 2017, "Axiomatic
Attribution for Deep Networks").

    model = tx.load_model_dir("models/translate", "seq2seq")
    sentence = ExperimentModel("models/translate").sentence("Wo ist der Bahnhof?")   # runtime.experiments
    a = attribute_translation(model, sentence.src_ids, sentence.tgt_in_ids, t, sentence.output_ids[t])
    a.source("integrated_gradients"), a.prefix("saliency"), a.completeness_error

The explained value f:
- translator: log p(token A at target position t | source, target prefix <s> y_1..y_{t-1}), teacher-forced;
  contrastive (`contrast` = token B): log p(A) − log p(B) ("why A rather than B"), which is the logit difference.
- classifier: the calibrated logit of a class (what the served model softmaxes); contrastive: the difference of
  two classes' logits.

The three methods, per token i with embedding e_i (D,) and g_i = ∂f/∂e_i:
- saliency: ‖g_i‖₂ (how sensitive f is to the token; no sign, no scale of the input);
- input × gradient: Σ_d e_id · g_id (first-order Taylor term of removing the token down to zero);
- integrated gradients: Σ_d (e_id − b_id) · ∫₀¹ ∂f/∂e_id (b + α(e − b)) dα, over a straight path from a
  baseline b. Completeness: Σ_i IG_i = f(e) − f(b) exactly; the quadrature's shortfall is returned as
  `completeness_error` = |Σ IG − (f(e) − f(b))| / |f(e) − f(b)|. Over 1% (`AttributionConfig.target_error`), the
  integral is taken again with twice the steps, up to 1,024; `Attribution.passes` keeps every pass's error.

Where the interpolation happens: on the token embeddings after the √d_model scaling and *before* the sinusoidal
positions are added (`Embeddings` -> path -> `PositionalEncoding`). The positions are not a choice of the user's
words: interpolating them too would hand part of f to "being at position 3" and spread it over the tokens, and
the baseline would be a sequence with no positions at all, which the model never saw. So the baseline keeps
every position and removes only the token identities: "zero" (default) puts a zero token embedding at every
position (the baseline input is the positional encoding alone), "pad" puts the <pad> token's embedding there
(still attended to: a pad the model is told to read). The source and the target prefix move along one path
together, so completeness covers their sum; every position is attributed, the <2xx> tag, </s> and <s> included.
IG depends on its baseline (a different b gives different numbers that are just as complete): docs/experiments.md.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .masks import causal_mask
from .model import SentimentClassifier, Seq2SeqTransformer

RULES = ("adaptive", "riemann", "gauss-legendre")
BASELINES = ("zero", "pad")
METHODS = ("saliency", "input_x_gradient", "integrated_gradients")
# f over a batch of embedding tensors [(B, N_k, D)] -> (B,) values
Objective = Callable[[list[Tensor]], Tensor]


@dataclass
class AttributionConfig:
    steps: int = 64  # integrated gradients' gradient evaluations (the completeness error shrinks with more)
    # "adaptive" (default): our own non-uniform midpoint rule guided by a forward scan (`adaptive_quadrature`);
    # "riemann": the midpoint rule (α = (k + ½)/steps, equal weights); "gauss-legendre": its nodes and weights on
    # [0, 1]. The translator is piecewise linear (ReLU), and along the path f climbs steeply over a few hundredths
    # of α somewhere in the middle: uniform points are too sparse there (midpoint at 64 steps: 13 of 40 shipped-
    # model tokens over 1% error, up to 23.7%), and Gauss–Legendre's nodes are sparsest exactly there (their
    # spacing mid-path is ~π/2 per step, 1.6× the midpoint rule's). Measured figures: docs/experiments.md.
    rule: str = "adaptive"
    scan: int = 128  # "adaptive": forward-only evaluations of f along the path (α = j/scan) that place the points
    flat_share: float = 0.25  # "adaptive": the share of the points spread evenly, so flat stretches keep some
    baseline: str = "zero"  # "zero" | "pad": see the module doc
    batch: int = 16  # interpolation points per forward/backward pass (memory against passes)
    # Refinement: while the completeness error is over `target_error`, integrated gradients run again with twice
    # the steps (same rule, same scan), up to `max_steps`; the scores returned are the last pass's, and every
    # pass's (steps, error) is kept. Why: no 64-point rule meets 1% on every token of the shipped translator (the
    # ReLU kinks make the integrand rough; docs/experiments.md), and a score whose parts do not add up to the
    # change it explains should not be shown as if they did. None: one pass at `steps`, whatever its error.
    target_error: float | None = 0.01
    max_steps: int = 1024


@dataclass(frozen=True)
class Attribution:
    """Scores for every attributed token: the source first (n_source of them), then the target prefix (if any)."""

    saliency: np.ndarray  # (N,) ‖∂f/∂e_i‖₂
    input_x_gradient: np.ndarray  # (N,) Σ_d e · ∂f/∂e
    integrated_gradients: np.ndarray  # (N,) Σ_d (e − b) · mean gradient along the path
    n_source: int  # how many of the N are source tokens
    value: float  # f at the input
    baseline_value: float  # f at the baseline
    completeness_error: float  # |Σ IG − (value − baseline_value)| / |value − baseline_value|
    steps: int
    rule: str
    baseline: str
    scan_evaluations: int = 0  # forward-only evaluations of f spent placing the points ("adaptive"; else 0)
    passes: tuple[tuple[int, float], ...] = ()  # (steps, completeness error) of each IG pass, the first at
    # config.steps, each next one at twice the steps (refinement); the last is `steps`, `completeness_error`

    @property
    def gradient_evaluations(self) -> int:
        """Backward passes spent on integrated gradients over every pass (the refinement's included)."""
        return sum(steps for steps, _ in self.passes) or self.steps

    def scores(self, method: str) -> np.ndarray:
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
        return getattr(self, method)

    def source(self, method: str) -> np.ndarray:
        """(S,) the method's scores over the source tokens."""
        return self.scores(method)[:self.n_source]

    def prefix(self, method: str) -> np.ndarray:
        """(T,) the method's scores over the target prefix (empty for the classifier)."""
        return self.scores(method)[self.n_source:]


def quadrature(steps: int, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """Points α in (0, 1) and weights summing to 1 for ∫₀¹ h(α) dα ≈ Σ w_k h(α_k): the fixed rules ("adaptive"
    needs f along the path: `adaptive_quadrature`)."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if rule == "adaptive":
        raise ValueError("the adaptive rule places its points from f along the path: use adaptive_quadrature")
    if rule == "riemann":
        return (np.arange(steps) + 0.5) / steps, np.full(steps, 1.0 / steps)
    nodes, weights = np.polynomial.legendre.leggauss(steps)  # on [-1, 1]
    return (nodes + 1) / 2, weights / 2


def adaptive_quadrature(path_values: np.ndarray, steps: int, flat_share: float = 0.25
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Our own non-uniform midpoint rule, guided by a forward scan: `path_values` (scan + 1,) is f at α = j/scan,
    j = 0..scan. Why: the network is piecewise linear, so ∂f/∂α jumps at every ReLU kink the path crosses, and on
    the shipped translator f climbs steeply over a few hundredths of α somewhere mid-path; equally spaced points
    put only one or two gradients on that stretch, and the integral's error is mostly made there.

    So [0, 1] is cut into `steps` sub-intervals of equal "mass", where the mass density on scan interval j is
    (1 − flat_share) · |Δf_j| / Σ|Δf| + flat_share (per unit α): steep stretches get narrow sub-intervals, flat
    ones still get their share. Each gradient is taken at its sub-interval's midpoint and weighted by the
    sub-interval's width (a midpoint rule on a non-uniform partition; the weights sum to 1 exactly). A jump of
    f between two scan points narrower than 1/scan is still found (its |Δf| is there); only its position inside
    that interval is not."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if not 0 < flat_share <= 1:
        raise ValueError(f"flat_share must be in (0, 1], got {flat_share}")
    change = np.abs(np.diff(np.asarray(path_values, dtype=np.float64)))  # (scan,) |Δf| per scan interval
    if len(change) < 1 or not np.all(np.isfinite(change)):
        raise ValueError("the forward scan needs at least 2 finite values of f along the path")
    scan = len(change)
    steep = change / change.sum() if change.sum() > 0 else np.full(scan, 1.0 / scan)
    mass = (1 - flat_share) * steep + flat_share / scan  # (scan,) each interval's share of the points, Σ = 1
    cumulative = np.concatenate([[0.0], np.cumsum(mass)])  # (scan + 1,) mass up to α = j/scan
    cumulative /= cumulative[-1]
    grid = np.linspace(0.0, 1.0, scan + 1)
    edges = np.interp(np.arange(steps + 1) / steps, cumulative, grid)  # (steps + 1,) equal mass between edges
    edges[0], edges[-1] = 0.0, 1.0
    return (edges[:-1] + edges[1:]) / 2, np.diff(edges)


def path_values(f: Objective, inputs: list[Tensor], baselines: list[Tensor], alphas: np.ndarray,
                batch: int) -> np.ndarray:
    """f at b + α(e − b) for each α: forward passes only, `batch` points a pass."""
    values = []
    with torch.no_grad():
        for start in range(0, len(alphas), batch):
            a = torch.tensor(alphas[start:start + batch], dtype=inputs[0].dtype)[:, None, None]  # (B, 1, 1)
            values.append(f([b + a * (e - b) for e, b in zip(inputs, baselines, strict=True)]).double().numpy())
    return np.concatenate(values)


def attribute(f: Objective, inputs: list[Tensor], baselines: list[Tensor], config: AttributionConfig,
              n_source: int) -> Attribution:
    """The three methods for objective f over `inputs` [(1, N_k, D)] against `baselines` (same shapes)."""
    if config.rule != "adaptive":
        quadrature(config.steps, config.rule)  # bad rule or steps: a ValueError before any pass
    if config.target_error is not None and not config.target_error > 0:
        raise ValueError(f"target_error must be above 0 (or None: no refinement), got {config.target_error}")
    x = [e.detach().clone().requires_grad_(True) for e in inputs]
    value = f(x)[0]
    grads = torch.autograd.grad(value, x)
    value = float(value.detach())
    with torch.no_grad():
        baseline_value = float(f([b.detach() for b in baselines])[0])
    scanned, scan_values = 0, None
    if config.rule == "adaptive":
        if config.scan < 2:
            raise ValueError(f"scan must be at least 2, got {config.scan}")
        inner = np.arange(1, config.scan) / config.scan  # the ends are f(b) and f(e), already known
        scanned = len(inner)
        scan_values = np.concatenate([[baseline_value], path_values(f, inputs, baselines, inner,
                                                                    4 * config.batch), [value]])

    def flat(parts: list[Tensor]) -> np.ndarray:
        return torch.cat([p[0] for p in parts]).detach().double().numpy()  # [(N_k,)] -> (N,)

    change = value - baseline_value
    passes, steps = [], config.steps
    while True:
        if scan_values is not None:
            alphas, weights = adaptive_quadrature(scan_values, steps, config.flat_share)
        else:
            alphas, weights = quadrature(steps, config.rule)
        path_grad = path_gradient(f, inputs, baselines, alphas, weights, config.batch)
        ig = flat([((e - b) * g).sum(dim=-1) for e, b, g in zip(inputs, baselines, path_grad, strict=True)])
        error = float(abs(ig.sum() - change) / abs(change) if change != 0 else float(abs(ig.sum()) > 0))
        passes.append((steps, error))
        if (config.target_error is None or error <= config.target_error or 2 * steps > config.max_steps
                or not np.isfinite(error)):  # NaN (a broken model): more steps would not mend it
            break
        steps *= 2

    saliency = flat([g.norm(dim=-1) for g in grads])
    input_x_gradient = flat([(e * g).sum(dim=-1) for e, g in zip(inputs, grads, strict=True)])
    return Attribution(saliency, input_x_gradient, ig, n_source, value, baseline_value, error, steps,
                       config.rule, config.baseline, scanned, tuple(passes))


def path_gradient(f: Objective, inputs: list[Tensor], baselines: list[Tensor], alphas: np.ndarray,
                  weights: np.ndarray, batch: int) -> list[Tensor]:
    """Σ_k w_k ∂f/∂e at b + α_k(e − b): [(1, N_k, D)], `batch` points a forward/backward pass."""
    path_grad = [torch.zeros_like(e) for e in inputs]
    for start in range(0, len(alphas), batch):
        a = torch.tensor(alphas[start:start + batch], dtype=inputs[0].dtype)[:, None, None]  # (B, 1, 1)
        w = torch.tensor(weights[start:start + batch], dtype=inputs[0].dtype)[:, None, None]
        points = [(b + a * (e - b)).detach().requires_grad_(True) for e, b in zip(inputs, baselines, strict=True)]
        point_grads = torch.autograd.grad(f(points).sum(), points)  # rows are independent: Σ's grad is per row
        for acc, g in zip(path_grad, point_grads, strict=True):
            acc += (w * g).sum(dim=0, keepdim=True)
    return path_grad


def baseline_like(embeddings: Tensor, embed: Callable[[Tensor], Tensor], pad_id: int, kind: str) -> Tensor:
    """The baseline for (1, N, D) token embeddings: zeros, or the <pad> embedding at every position."""
    if kind not in BASELINES:
        raise ValueError(f"baseline must be one of {', '.join(BASELINES)}, got {kind!r}")
    if kind == "zero":
        return torch.zeros_like(embeddings)
    with torch.no_grad():
        return embed(torch.full(embeddings.shape[:2], pad_id, dtype=torch.long))


def check_token(token: int, vocab: int, name: str) -> None:
    if not 0 <= token < vocab:
        raise ValueError(f"{name} {token} is outside the vocabulary (0..{vocab - 1})")


def translation_objective(model: Seq2SeqTransformer, position: int, target: int,
                          contrast: int | None = None) -> Objective:
    """f([source embeddings (B, S, D), target-prefix embeddings (B, position + 1, D)]) -> (B,): log p(target) at
    `position` (minus log p(contrast)), teacher-forced over the given prefix, every source token attended to."""

    def f(embeddings: list[Tensor]) -> Tensor:
        src, tgt = embeddings
        keep = torch.ones(src.shape[:2], dtype=torch.bool)  # (B, S): no padding, the baseline is read as well
        memory = model.encoder(model.positional(src), keep)[0]
        cache = model.init_cache(memory)
        hidden = model.decoder(model.positional(tgt), cache, keep, causal_mask(tgt.size(1)))[0]  # (B, T, D)
        log_probs = model.generator(hidden[:, position]).log_softmax(dim=-1)  # (B, V)
        value = log_probs[:, target]
        return value if contrast is None else value - log_probs[:, contrast]

    return f


def attribute_translation(model: Seq2SeqTransformer, src_ids: Sequence[int], tgt_in_ids: Sequence[int],
                          position: int, target: int, contrast: int | None = None,
                          config: AttributionConfig | None = None) -> Attribution:
    """Attribute log p(target) at target `position` (the step whose decoder input is tgt_in_ids[position]) to the
    source tokens and to the prefix tgt_in_ids[:position + 1]; `contrast`: why `target` rather than it."""
    config = config or AttributionConfig()
    if not 0 <= position < len(tgt_in_ids):
        raise ValueError(f"target position {position} is outside the translation (0..{len(tgt_in_ids) - 1})")
    if not src_ids:
        raise ValueError("the source is empty: nothing to attribute")
    vocab = model.config.tgt_vocab_size
    check_token(target, vocab, "target token")
    if contrast is not None:
        check_token(contrast, vocab, "contrast token")
        if contrast == target:
            raise ValueError("the contrast token is the target token: log p(A) − log p(A) is 0 whatever the input")
    model.eval()
    src = torch.tensor([list(src_ids)], dtype=torch.long)
    tgt = torch.tensor([list(tgt_in_ids[:position + 1])], dtype=torch.long)
    dtype = next(model.parameters()).dtype
    inputs = [model.src_embed(src).to(dtype).detach(), model.tgt_embed(tgt).to(dtype).detach()]
    pad_id = model.config.pad_id
    baselines = [baseline_like(inputs[0], model.src_embed, pad_id, config.baseline),
                 baseline_like(inputs[1], model.tgt_embed, pad_id, config.baseline)]
    return attribute(translation_objective(model, position, target, contrast), inputs, baselines, config,
                     n_source=len(src_ids))


def classification_objective(model: SentimentClassifier, label: int, contrast: int | None = None) -> Objective:
    """f([token embeddings (B, S, D)]) -> (B,): the calibrated logit of `label` (minus that of `contrast`)."""

    def f(embeddings: list[Tensor]) -> Tensor:
        (x,) = embeddings
        keep = torch.ones(x.shape[:2], dtype=torch.bool)
        states = model.encoder(model.positional(x), keep)[0]
        logits = model.head(model.pool(states, keep)) / model.config.temperature  # (B, C)
        value = logits[:, label]
        return value if contrast is None else value - logits[:, contrast]

    return f


def attribute_classification(model: SentimentClassifier, ids: Sequence[int], label: int,
                             contrast: int | None = None, config: AttributionConfig | None = None) -> Attribution:
    """Attribute the classifier's logit of `label` (minus `contrast`'s) to the text's tokens."""
    config = config or AttributionConfig()
    if not ids:
        raise ValueError("the text is empty: nothing to attribute")
    classes = model.config.n_classes
    for name, value in (("label", label), ("contrast label", contrast)):
        if value is not None and not 0 <= value < classes:
            raise ValueError(f"{name} {value} is outside the classes (0..{classes - 1})")
    if contrast == label:
        raise ValueError("the contrast label is the label itself: the difference is 0 whatever the input")
    model.eval()
    dtype = next(model.parameters()).dtype
    embeddings = model.embed(torch.tensor([list(ids)], dtype=torch.long)).to(dtype).detach()
    baseline = baseline_like(embeddings, model.embed, model.config.pad_id, config.baseline)
    return attribute(classification_objective(model, label, contrast), [embeddings], [baseline], config,
                     n_source=len(ids))
