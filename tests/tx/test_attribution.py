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
    config = AttributionConfig(steps=64, rule=rule, baseline=baseline, target_error=None)  # no refinement
    check_complete(attribute_translation(translator, SRC, TGT_IN, POSITION, TARGET, config=config), 0.01)
    check_complete(attribute_classification(classifier, SRC, 1, config=config), 0.01)


def test_the_completeness_error_vanishes_with_more_steps():
    """Seed 1's models miss 1% at 64 steps (2.1% and 1.0%, the midpoint rule); at 1024 they are within 0.2%."""
    translator, classifier = models(1)
    config = AttributionConfig(steps=1024, batch=256, target_error=None)
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
    config = AttributionConfig(steps=16, rule="riemann", target_error=None)  # the same points for all three
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
        a = attribute(f, inputs, baselines, AttributionConfig(steps=64, rule=rule, target_error=None), n_source=1)
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


def steep_path():
    dimension = 6
    return (steep_relu_objective(dimension), [torch.ones(1, 1, dimension, dtype=torch.float64)],
            [torch.zeros(1, 1, dimension, dtype=torch.float64)])


def test_refinement_doubles_the_steps_until_the_error_is_within_the_target():
    """The midpoint rule misses 1% by far at 64 steps on the steep path; refined, each pass doubles the steps
    and the first within 1% is the one returned, with the same scores as one pass at that many steps."""
    f, inputs, baselines = steep_path()
    a = attribute(f, inputs, baselines, AttributionConfig(steps=64, rule="riemann"), n_source=1)
    steps = [s for s, _ in a.passes]
    errors = [e for _, e in a.passes]
    assert steps[0] == 64 and len(steps) >= 2 and steps == [64 * 2 ** k for k in range(len(steps))]
    assert errors[0] > 0.1 and all(e > 0.01 for e in errors[:-1]) and errors[-1] <= 0.01
    assert a.steps == steps[-1] and a.completeness_error == errors[-1]
    assert a.gradient_evaluations == sum(steps)
    once = attribute(f, inputs, baselines, AttributionConfig(steps=a.steps, rule="riemann", target_error=None),
                     n_source=1)
    np.testing.assert_allclose(a.integrated_gradients, once.integrated_gradients, rtol=0, atol=1e-12)
    assert once.passes == ((a.steps, once.completeness_error),)


def test_refinement_stops_at_max_steps_and_says_the_error_it_reached():
    f, inputs, baselines = steep_path()
    a = attribute(f, inputs, baselines, AttributionConfig(steps=64, rule="riemann", max_steps=128), n_source=1)
    assert [s for s, _ in a.passes] == [64, 128] and a.steps == 128
    assert a.completeness_error > 0.01  # not hidden: the error the last pass reached
    with pytest.raises(ValueError, match="target_error must be above 0"):
        attribute(f, inputs, baselines, AttributionConfig(target_error=0), n_source=1)


def test_no_refinement_where_the_first_pass_is_within_the_target(translator):
    a = attribute_translation(translator, SRC, TGT_IN, POSITION, TARGET)  # seed 4: within 1% at 64 (above)
    assert a.passes == ((64, a.completeness_error),) and a.gradient_evaluations == 64


def test_a_nan_objective_takes_one_pass_not_the_whole_refinement():
    f, inputs, baselines = steep_path()
    a = attribute(lambda points: f(points) * float("nan"), inputs, baselines, AttributionConfig(rule="riemann"),
                  n_source=1)
    assert len(a.passes) == 1 and np.isnan(a.completeness_error)
