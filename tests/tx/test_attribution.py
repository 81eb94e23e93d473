"""tx.attribution on tiny models built here (float64, so finite differences and sums are exact to ~1e-9):
integrated gradients' completeness, saliency and input × gradient against finite differences, contrastive
attributions as differences, and bad input in words."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import tiny_classifier, tiny_seq2seq

from tx.attribution import (
    AttributionConfig,
    adaptive_quadrature,
    attribute,
    attribute_classification,
    attribute_translation,
    classification_objective,
    translation_objective,
)

SRC = [5, 17, 9, 23, 2]  # any ids of the tiny vocabulary (40)
TGT_IN = [1, 12, 30, 8]
POSITION, TARGET, CONTRAST = 2, 8, 19


def models(seed: int):
    torch.manual_seed(seed)
    return tiny_seq2seq().double(), tiny_classifier().double()


@pytest.fixture(scope="module")
def translator():
    return models(4)[0]


@pytest.fixture(scope="module")
def classifier():
    return models(4)[1]


def check_complete(attribution, bound: float) -> None:
    change = attribution.value - attribution.baseline_value
    assert abs(change) > 1e-2  # the test means something: the output moves along the path
    assert attribution.completeness_error <= bound
    assert abs(attribution.integrated_gradients.sum() - change) <= bound * abs(change)


@pytest.mark.parametrize("rule", ["adaptive", "riemann", "gauss-legendre"])
@pytest.mark.parametrize("baseline", ["zero", "pad"])
def test_integrated_gradients_are_complete_at_64_steps(translator, classifier, rule, baseline):
    """≤ 1% at 64 steps. Seed 4's models: a ReLU network's integrand jumps wherever the path crosses a ReLU's
    kink, so the quadrature's error falls only as 1/steps, and of 8 random tiny models (seeds 0-7) 4 meet 1% with
    the midpoint and Gauss–Legendre rules and every baseline at 64 steps (errors up to 6.6% in the others; the
    next test's model is one). The adaptive rule was checked on seed 4 only, here."""
    config = AttributionConfig(steps=64, rule=rule, baseline=baseline)
    check_complete(attribute_translation(translator, SRC, TGT_IN, POSITION, TARGET, config=config), 0.01)
    check_complete(attribute_classification(classifier, SRC, 1, config=config), 0.01)


def test_the_completeness_error_vanishes_with_more_steps():
    """Seed 1's models miss 1% at 64 steps (2.1% and 1.0%, the midpoint rule); at 1024 they are within 0.2%."""
    translator, classifier = models(1)
    config = AttributionConfig(steps=1024, batch=256)
    check_complete(attribute_translation(translator, SRC, TGT_IN, POSITION, TARGET, config=config), 0.002)
    check_complete(attribute_classification(classifier, SRC, 1, config=config), 0.002)


def finite_difference_gradient(f, embeddings: list[torch.Tensor], part: int, token: int, eps: float = 1e-5):
    """∂f/∂e[part][0, token, :] by central differences, one coordinate at a time."""
    grad = np.zeros(embeddings[part].shape[-1])
    for d in range(len(grad)):
        values = []
        for sign in (1, -1):
            moved = [e.clone() for e in embeddings]
            moved[part][0, token, d] += sign * eps
            with torch.no_grad():
                values.append(float(f(moved)[0]))
        grad[d] = (values[0] - values[1]) / (2 * eps)
    return grad


def test_saliency_and_input_x_gradient_match_finite_differences(translator, classifier):
    a = attribute_translation(translator, SRC, TGT_IN, POSITION, TARGET)
    src = translator.src_embed(torch.tensor([SRC])).detach()
    tgt = translator.tgt_embed(torch.tensor([TGT_IN[:POSITION + 1]])).detach()
    f = translation_objective(translator, POSITION, TARGET)
    for part, token, index in ((0, 3, 3), (1, 1, len(SRC) + 1)):  # a source token, then a prefix token
        grad = finite_difference_gradient(f, [src, tgt], part, token)
        embedding = (src, tgt)[part][0, token].numpy()
        assert a.saliency[index] == pytest.approx(np.linalg.norm(grad), rel=1e-6)
        assert a.input_x_gradient[index] == pytest.approx(embedding @ grad, rel=1e-6, abs=1e-9)

    c = attribute_classification(classifier, SRC, 0)
    embeddings = classifier.embed(torch.tensor([SRC])).detach()
    grad = finite_difference_gradient(classification_objective(classifier, 0), [embeddings], 0, 2)
    assert c.saliency[2] == pytest.approx(np.linalg.norm(grad), rel=1e-6)


def test_contrastive_is_the_difference_of_the_two_attributions(translator, classifier):
    """Exact with a fixed rule (the same points for all three); the adaptive rule places its points from each
    objective's own path, so there it holds only up to the quadrature error."""
    config = AttributionConfig(steps=16, rule="riemann")
    a = attribute_translation(translator, SRC, TGT_IN, POSITION, TARGET, config=config)
    b = attribute_translation(translator, SRC, TGT_IN, POSITION, CONTRAST, config=config)
    ab = attribute_translation(translator, SRC, TGT_IN, POSITION, TARGET, contrast=CONTRAST, config=config)
    for method in ("input_x_gradient", "integrated_gradients"):
        np.testing.assert_allclose(ab.scores(method), a.scores(method) - b.scores(method), atol=1e-9)
    assert ab.value == pytest.approx(a.value - b.value)
    assert len(ab.source("saliency")) == len(SRC) and len(ab.prefix("saliency")) == POSITION + 1

    one, zero = (attribute_classification(classifier, SRC, label, config=config) for label in (1, 0))
    both = attribute_classification(classifier, SRC, 1, contrast=0, config=config)
    np.testing.assert_allclose(both.integrated_gradients, one.integrated_gradients - zero.integrated_gradients,
                               atol=1e-9)


def test_bad_input_is_a_value_error_in_words(translator, classifier):
    cases = [
        (lambda: attribute_translation(translator, SRC, TGT_IN, 9, TARGET), "outside the translation"),
        (lambda: attribute_translation(translator, SRC, TGT_IN, 1, 400), "outside the vocabulary"),
        (lambda: attribute_translation(translator, SRC, TGT_IN, 1, TARGET, contrast=TARGET), "is the target"),
        (lambda: attribute_translation(translator, [], TGT_IN, 1, TARGET), "empty"),
        (lambda: attribute_classification(classifier, SRC, 5), "outside the classes"),
        (lambda: attribute_translation(translator, SRC, TGT_IN, 1, TARGET, config=AttributionConfig(rule="x")),
         "rule must be"),
        (lambda: attribute_translation(translator, SRC, TGT_IN, 1, TARGET, config=AttributionConfig(baseline="x")),
         "baseline must be"),
    ]
    for call, words in cases:
        with pytest.raises(ValueError, match=words):
            call()


def test_adaptive_weights_sum_to_one_and_lie_in_the_open_unit_interval():
    """A steep stretch (f jumps by 5 between α = 0.40 and 0.44 of a 128-interval scan) and a flat path."""
    alphas_scanned = np.linspace(0, 1, 129)
    steep = np.clip((alphas_scanned - 0.40) / 0.04, 0, 1) * 5 + 0.1 * alphas_scanned
    for values in (steep, np.zeros(129)):
        alphas, weights = adaptive_quadrature(values, 64)
        assert weights.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all((weights > 0) & (weights < 1)) and np.all((alphas > 0) & (alphas < 1))
        assert np.all(np.diff(alphas) > 0)
    alphas, weights = adaptive_quadrature(steep, 64)
    on_the_stretch = (alphas > 0.40) & (alphas < 0.44)
    assert on_the_stretch.sum() > 30  # most points where f changes
    assert (alphas < 0.40).sum() >= 6  # the floor: a quarter of the points spread evenly, ~6 on [0, 0.4)
    np.testing.assert_allclose(adaptive_quadrature(np.zeros(129), 64)[1], 1 / 64)  # flat: the midpoint rule


def steep_relu_objective(dimension: int):
    """A tiny ReLU network of u = <1, e> / dimension (u = α on the path from 0 to the all-ones input): slope 0.1
    everywhere, plus 40 between the kinks at α = 0.4213 and 0.4467 (f climbs by ~1 over 2.5% of the path)."""
    hidden = torch.nn.Linear(dimension, 2).double()
    out = torch.nn.Linear(2, 1, bias=False).double()
    with torch.no_grad():
        hidden.weight.fill_(40.0 / dimension)
        hidden.bias.copy_(torch.tensor([-40 * 0.4213, -40 * 0.4467]))
        out.weight.copy_(torch.tensor([[1.0, -1.0]]))
    network = torch.nn.Sequential(hidden, torch.nn.ReLU(), out)

    def f(embeddings):
        (x,) = embeddings  # (B, 1, D)
        return network(x[:, 0])[:, 0] + 0.1 * x[:, 0].sum(dim=-1) / dimension

    return f


def test_adaptive_rule_beats_the_midpoint_rule_on_a_steep_relu_path():
    """The midpoint rule's 64 points put 2 gradients on the steep stretch (21% error); the adaptive rule's
    forward scan finds the stretch and puts most of its 64 points there."""
    dimension = 6
    inputs, baselines = [torch.ones(1, 1, dimension, dtype=torch.float64)], [torch.zeros(1, 1, dimension,
                                                                                           dtype=torch.float64)]
    f = steep_relu_objective(dimension)
    errors = {}
    for rule in ("riemann", "adaptive"):
        a = attribute(f, inputs, baselines, AttributionConfig(steps=64, rule=rule), n_source=1)
        assert abs(a.value - a.baseline_value) > 1  # the path climbs
        errors[rule] = a.completeness_error
        assert a.scan_evaluations == (127 if rule == "adaptive" else 0)
    assert errors["riemann"] > 0.1
    assert errors["adaptive"] < 0.01 and errors["adaptive"] < errors["riemann"] / 10


def test_adaptive_bad_input_is_a_value_error_in_words():
    with pytest.raises(ValueError, match="at least 2 finite"):
        adaptive_quadrature(np.array([1.0, np.nan, 2.0]), 8)
    with pytest.raises(ValueError, match="flat_share must be"):
        adaptive_quadrature(np.zeros(9), 8, flat_share=0)
    with pytest.raises(ValueError, match="steps must be"):
        adaptive_quadrature(np.zeros(9), 0)
