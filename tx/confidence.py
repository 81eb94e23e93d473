"""What a translation's `confidence` (the geometric mean of its token probabilities) says about it being
right, measured per decoding method on hand-judged outputs of the same model: `everyday_judged.tsv`
(direction, source, hypothesis, correct = yes/no) in the model directory. `python -m tx confidence MODEL_DIR`
writes MODEL_DIR/confidence.json, which `runtime.confidence` reads to give the app's one verdict per output.

How each method is measured (the judgement is about an exact text, so only outputs identical to the judged
hypothesis are counted; the others are reported as `skipped_changed_outputs`):
- beam: the judged sources are translated again with beam search (default beam 4, α 0.6, the app's defaults);
- greedy: the same sources translated greedily (deterministic); a greedy output counts only where it is the
  judged text, so greedy is calibrated on that subset;
- sample: not calibrated. A sampled output is random, so it rarely is the judged text; the tool samples each
  source once (the app's defaults: temperature 1, no top-k/top-p, seed 0) and records how many matched, to
  show why there is no verdict for sampling.

Bands are fixed edges on the confidence as the app shows it (a whole percentage, `runtime.confidence.percent`:
an output shown as 80% is in the 80–100% band). The verdict rule, per method, with cuts only on band edges:
- "probably wrong" below the highest edge W such that the outputs below W together were right at most
  `wrong_at_most` (default 25%: at most 1 in 4) and so was every band below W holding at least
  `min_band_outputs` (10) outputs; at least `min_region_outputs` (20) outputs below W. No such edge: W = 0;
- "probably right" from the lowest edge R >= W such that the outputs from R up together were right at least
  `right_at_least` (default 75%: at least 3 in 4), and so was every band from R up holding at least
  `min_band_outputs`; at least `min_region_outputs` outputs from R up. No such edge: nothing is called right;
- "uncertain" in between.
The report also gives each method's area under the ROC curve (how well confidence ranks right above wrong:
0.5 = not at all) overall and per direction. The everyday set is a dev set (it also picks checkpoints), and the
cuts the app uses are chosen on all the counted outputs, so their own bands flatter them. What a verdict is worth
is therefore reported on outputs the cuts were not chosen on (`held_out`): the counted outputs are split in two
halves (every other one of each direction, in the judged file's order), the cuts are chosen by the same rule on
one half and every output of the other half gets the verdict those cuts give, then the halves swap; each verdict's
held-out outputs and how many were right are pooled over both. The app calls a verdict weak where its held-out
share misses the rule's bound or rests on too few outputs. The Django catalogs are never used here.

The fitted score (`scorers`, read by runtime.confidence_score) is a logistic regression over a feature set chosen
among every non-empty subset of the scorer's features (CANDIDATES: 7 without the back pass, 8 with it). Choosing the
best of many sets on the halves it is then reported on flatters the winner, so the choice sits inside the
cross-fitting (`nested_cross_fit`): the set is chosen on the fitting half alone (by that half's own two halves),
fitted there, and the other half scored, both ways. The held-out AUROC and the score bands the app quotes are those
nested scores; the shipped scorer is the same procedure run on all the counted outputs. `selection` records the
set each half chose and the flattered best-of-candidates figure beside it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from runtime.confidence import BACK, FORMAT, PLAIN, RIGHT, UNCERTAIN, WRONG, percent
from runtime.confidence_score import BACK_FEATURES, FEATURES, back_pass, features

from .inference import Translator

JUDGED_FILE = "everyday_judged.tsv"
EDGES = (0, 30, 40, 50, 60, 70, 80, 90, 100)  # band edges, in shown percent
RULE = {"wrong_at_most": 0.25, "right_at_least": 0.75, "min_band_outputs": 10, "min_region_outputs": 20}
SAMPLING = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "seed": 0}
L2 = 1.0  # ridge penalty on the standardised weights: keeps a fit on ~120 outputs from chasing noise
SCORE_EDGES = tuple(round(0.1 * i, 1) for i in range(11))


def auroc(scores: np.ndarray, right: np.ndarray) -> float:
    """P(a random right output has a higher score than a random wrong one); ties count half."""
    pos, neg = scores[right], scores[~right]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def rounded_auroc(scores: np.ndarray, right: np.ndarray) -> float | None:
    """auroc to 4 places; None (JSON null) where it is undefined (no right or no wrong output)."""
    value = auroc(scores, right.astype(bool))
    return None if np.isnan(value) else round(value, 4)


def band_counts(shown: np.ndarray, right: np.ndarray, edges: tuple[int, ...] = EDGES) -> list[tuple[int, int]]:
    """(outputs, right) per band lo <= shown < hi; the last band includes its upper edge (100%)."""
    counts = []
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
        m = (shown >= lo) & ((shown < hi) | ((shown == hi) & (i == len(edges) - 2)))
        counts.append((int(m.sum()), int(right[m].sum())))
    return counts


def choose_cuts(counts: list[tuple[int, int]], edges: tuple[int, ...] = EDGES, wrong_at_most: float = 0.25,
                right_at_least: float = 0.75, min_band_outputs: int = 10,
                min_region_outputs: int = 20) -> tuple[int, int | None]:
    """(W, R) by the module's rule: shown confidence < W% "probably wrong", >= R% "probably right" (R None:
    never); both are band edges."""
    def holds(bands: list[tuple[int, int]], ok) -> bool:
        outputs, right = sum(n for n, _ in bands), sum(r for _, r in bands)
        return (outputs >= min_region_outputs and ok(right / outputs)
                and all(ok(r / n) for n, r in bands if n >= min_band_outputs))

    wrong = [i for i in range(1, len(edges)) if holds(counts[:i], lambda s: s <= wrong_at_most)]
    w = max(wrong, default=0)
    right = [i for i in range(w, len(edges) - 1) if holds(counts[i:], lambda s: s >= right_at_least)]
    return edges[w], (edges[min(right)] if right else None)


def band_verdict(lo: int, hi: int, wrong_below: int, right_from: int | None) -> str:
    if hi <= wrong_below:
        return WRONG
    return RIGHT if right_from is not None and lo >= right_from else UNCERTAIN


def share(right: int, outputs: int) -> float | None:
    return round(right / outputs, 4) if outputs else None


def verdict_at(shown: int, wrong_below: int, right_from: int | None) -> str:
    """The verdict the cuts give an output shown as `shown` % (runtime.confidence.MethodCalibration.verdict)."""
    if shown < wrong_below:
        return WRONG
    return RIGHT if right_from is not None and shown >= right_from else UNCERTAIN


def halves(kept: dict[str, list[tuple[float, bool]]]) -> list[list[tuple[float, bool]]]:
    """The counted outputs in two halves: every other one of each direction, in the judged file's order (so each
    half holds both directions and both ends of the file)."""
    pairs = [ps for _, ps in sorted(kept.items())]
    return [[p for ps in pairs for p in ps[start::2]] for start in (0, 1)]


def held_out(parts: list[list[tuple[float, bool]]], rule: dict[str, Any],
             edges: tuple[int, ...] = EDGES) -> dict[str, Any]:
    """Cuts chosen on each part's complement, verdicts given to the part's outputs: per part the cuts used, and per
    verdict the held-out outputs and how many were right, pooled over the parts (module docstring)."""
    pooled = {verdict: [0, 0] for verdict in (WRONG, UNCERTAIN, RIGHT)}
    cuts = []
    for k, part in enumerate(parts):
        rest = [p for j, other in enumerate(parts) if j != k for p in other]
        shown = np.array([percent(s) for s, _ in rest], dtype=int)
        w, r = choose_cuts(band_counts(shown, np.array([ok for _, ok in rest], dtype=bool), edges), edges, **rule)
        cuts.append({"chosen_on": len(rest), "probably_wrong_below": w / 100,
                     "probably_right_from": None if r is None else r / 100})
        for confidence, ok in part:
            counted = pooled[verdict_at(percent(confidence), w, r)]
            counted[0], counted[1] = counted[0] + 1, counted[1] + int(ok)
    return {"split": "two halves: every other counted output of each direction", "cuts": cuts,
            "verdicts": {v: {"outputs": n, "right": k, "share_right": share(k, n)} for v, (n, k) in pooled.items()}}


def calibrate(kept: dict[str, list[tuple[float, bool]]], skipped: int, settings: dict[str, Any],
              rule: dict[str, Any]) -> dict[str, Any]:
    """One method's report from its counted (confidence, right) pairs per direction."""
    pairs = [p for ps in kept.values() for p in ps]
    scores = np.array([s for s, _ in pairs], dtype=float)
    right = np.array([r for _, r in pairs], dtype=bool)
    shown = np.array([percent(s) for s in scores], dtype=int)
    counts = band_counts(shown, right)
    w, r = choose_cuts(counts, EDGES, **rule)
    bands = [{"from": lo / 100, "to": hi / 100, "outputs": n, "right": k, "share_right": share(k, n),
              "verdict": band_verdict(lo, hi, w, r)}
             for (lo, hi), (n, k) in zip(zip(EDGES[:-1], EDGES[1:], strict=True), counts, strict=True)]
    verdicts = {}
    for verdict in (WRONG, UNCERTAIN, RIGHT):
        n = sum(b["outputs"] for b in bands if b["verdict"] == verdict)
        k = sum(b["right"] for b in bands if b["verdict"] == verdict)
        verdicts[verdict] = {"outputs": n, "right": k, "share_right": share(k, n)}
    return {"calibrated": True, "settings": settings, "outputs": len(pairs), "right": int(right.sum()),
            "skipped_changed_outputs": skipped, "auroc": rounded_auroc(scores, right),
            "probably_wrong_below": w / 100, "probably_right_from": None if r is None else r / 100,
            "bands": bands, "verdicts": verdicts, "held_out": held_out(halves(kept), rule),
            "directions": {d: {"outputs": len(ps), "right": sum(ok for _, ok in ps),
                               "auroc": rounded_auroc(np.array([s for s, _ in ps]), np.array([ok for _, ok in ps]))}
                           for d, ps in sorted(kept.items())}}


def matching(translator: Translator, rows: list[dict[str, str]], back: bool = False, **settings: Any):
    """(counted (confidence, right) pairs per direction, outputs that differ from the judged text, and each counted
    output's features per direction (runtime.confidence_score.features; with `back`, translated back with the
    source forced, as the app does: runtime.confidence_score.back_pass))."""
    kept: dict[str, list[tuple[float, bool]]] = {}
    output_features: dict[str, list[dict[str, float]]] = {}
    skipped = 0
    for direction in sorted({r["direction"] for r in rows}):
        src, tgt = direction.split("-")
        part = [r for r in rows if r["direction"] == direction]
        outputs = translator.translate([r["source"] for r in part], src, tgt, **settings)
        counted = [(row, out) for row, out in zip(part, outputs, strict=True) if out.text == row["hypothesis"]]
        skipped += len(part) - len(counted)  # the judgement is about another text
        backs = (back_pass(translator, [out for _, out in counted], [row["source"] for row, _ in counted], src, tgt)
                 if back and counted else [None] * len(counted))
        for (row, out), returned in zip(counted, backs, strict=True):
            kept.setdefault(direction, []).append((out.confidence, row["correct"] == "yes"))
            output_features.setdefault(direction, []).append(features(out, row["source"], returned))
    return kept, skipped, output_features


def fit_logistic(x: np.ndarray, y: np.ndarray, groups: np.ndarray, n_groups: int,
                 l2: float = L2) -> tuple[np.ndarray, np.ndarray]:
    """(weights on the columns of x, one intercept per group) maximising the log-likelihood less l2/2 |w|^2 (the
    intercepts unpenalised), by Newton's method; x is already standardised."""
    design = np.concatenate([np.eye(n_groups)[groups], x], axis=1)
    penalty = np.diag(np.r_[np.zeros(n_groups), np.full(x.shape[1], l2)])
    theta = np.zeros(design.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-design @ theta))
        gradient = design.T @ (p - y) + penalty @ theta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + penalty + 1e-9 * np.eye(len(theta))
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-10:
            break
    return theta[n_groups:], theta[:n_groups]


def fit_scorer(rows: list[tuple[str, dict[str, float], bool]], names: tuple[str, ...],
               directions: list[str]) -> dict[str, Any]:
    """A scorer's confidence.json entry (runtime.confidence_score.parse_scorer) fitted on (direction, features,
    right) rows: the standardisation, the weights and the per-direction intercepts."""
    x = np.array([[f[n] for n in names] for _, f, _ in rows], dtype=float)
    mean, scale = x.mean(0), x.std(0)
    scale = np.where(scale > 0, scale, 1.0)  # a constant feature gets weight on nothing
    groups = np.array([directions.index(d) for d, _, _ in rows])
    weights, intercepts = fit_logistic((x - mean) / scale, np.array([ok for *_, ok in rows], dtype=float),
                                       groups, len(directions))
    return {"features": list(names), "mean": [round(float(v), 6) for v in mean],
            "scale": [round(float(v), 6) for v in scale], "weights": [round(float(v), 6) for v in weights],
            "intercepts": {d: round(float(b), 6) for d, b in zip(directions, intercepts, strict=True)}}


def score_bands(scores: np.ndarray, right: np.ndarray, min_outputs: int,
                edges: tuple[float, ...] = SCORE_EDGES) -> list[dict[str, Any]]:
    """Held-out outputs by score: fixed bands (edges), each merged upward with its neighbours until it holds at
    least min_outputs; a short last band joins the one below. The last band includes its upper edge."""
    def count(lo: float, hi: float, last: bool) -> tuple[int, int]:
        m = (scores >= lo) & ((scores < hi) | (last & (scores == hi)))
        return int(m.sum()), int(right[m].sum())

    bands: list[list[float]] = []
    lo = edges[0]
    for hi in edges[1:]:
        if count(lo, hi, hi == edges[-1])[0] >= min_outputs:
            bands.append([lo, hi])
            lo = hi
    if lo != edges[-1]:
        if bands:
            bands[-1][1] = edges[-1]
        else:
            bands.append([lo, edges[-1]])
    band_rows = []
    for lo, hi in bands:
        n, k = count(lo, hi, hi == edges[-1])
        band_rows.append({"from": lo, "to": hi, "outputs": n, "right": k, "share_right": share(k, n)})
    return band_rows


def candidate_sets(names: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Every non-empty subset of `names`, each in the order of `names`."""
    return [tuple(n for i, n in enumerate(names) if mask >> i & 1) for mask in range(1, 2 ** len(names))]


# The feature sets each scorer chooses among (module docstring): 7 without the back pass, 8 with source_log_prob.
CANDIDATES = {PLAIN: [c for c in candidate_sets(FEATURES) if not set(c) & set(BACK_FEATURES)],
              BACK: [c for c in candidate_sets(FEATURES) if set(c) & set(BACK_FEATURES)]}

Row = tuple[str, dict[str, float], bool]  # (direction, features, right)


def row_halves(rows: list[Row], directions: list[str]) -> list[list[Row]]:
    """Two halves: every other row of each direction (as `halves`)."""
    return [[r for d in directions for r in [x for x in rows if x[0] == d][start::2]] for start in (0, 1)]


def scored(entry: dict[str, Any], rows: list[Row]) -> list[tuple[str, float, bool]]:
    """(direction, score, right) of each row under a fit_scorer entry."""
    names = entry["features"]
    w, m, sc = (np.array(entry[key]) for key in ("weights", "mean", "scale"))
    return [(d, float(1 / (1 + np.exp(-(entry["intercepts"][d] + w @ ((np.array([f[n] for n in names]) - m) / sc))))),
             ok) for d, f, ok in rows]


def cross_fit(rows: list[Row], names: tuple[str, ...], directions: list[str]) -> list[tuple[str, float, bool]]:
    """Each half of `rows` scored by the fit of `names` on the other half: (direction, score, right) per row."""
    parts = row_halves(rows, directions)
    return [h for k in (0, 1) for h in scored(fit_scorer(parts[1 - k], names, directions), parts[k])]


def pooled_auroc(held: list[tuple[str, float, bool]]) -> float:
    return auroc(np.array([s for _, s, _ in held]), np.array([ok for *_, ok in held], dtype=bool))


def select_features(rows: list[Row], candidates: list[tuple[str, ...]],
                    directions: list[str]) -> tuple[tuple[str, ...], float]:
    """(the candidate whose cross-fitted AUROC on `rows` is highest, that AUROC); ties and undefined AUROCs go to
    the earlier candidate. Uses nothing but `rows`."""
    best, best_auroc = candidates[0], float("-inf")
    for names in candidates:
        value = pooled_auroc(cross_fit(rows, names, directions))
        if not np.isnan(value) and value > best_auroc:
            best, best_auroc = names, value
    return best, best_auroc


def nested_cross_fit(rows: list[Row], candidates: list[tuple[str, ...]],
                     directions: list[str]) -> tuple[list[tuple[str, float, bool]], list[tuple[str, ...]]]:
    """Selection inside the cross-fitting: for each half, the feature set is chosen on the other half alone
    (select_features, by that half's own two halves), fitted on it, and the half scored; then the halves swap.
    Returns (direction, score, right) per row and the set chosen on each fitting half."""
    parts = row_halves(rows, directions)
    held, chosen = [], []
    for k in (0, 1):
        names, _ = select_features(parts[1 - k], candidates, directions)
        chosen.append(names)
        held += scored(fit_scorer(parts[1 - k], names, directions), parts[k])
    return held, chosen


def scorers(features: dict[str, list[dict[str, float]]], kept: dict[str, list[tuple[float, bool]]],
            rule: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """({PLAIN/BACK: entry with held-out bands and AUROC}, '') or ({}, why not) for one method (module docstring).

    Each entry's feature set is chosen among CANDIDATES[kind] by the same procedure its held-out AUROC and bands
    measure (nested_cross_fit): the shipped entry is that procedure run on all the counted outputs."""
    directions = sorted(kept)
    rows = [(d, f, ok) for d in directions for f, (_, ok) in zip(features[d], kept[d], strict=True)]
    parts = row_halves(rows, directions)
    if len(rows) < rule["min_region_outputs"] or any(len({ok for *_, ok in part}) < 2 for part in parts):
        return {}, (f"too few outputs to fit a score on: {len(rows)} counted, each half needs right and wrong ones "
                    f"and all together at least {rule['min_region_outputs']}")
    result = {}
    for kind, candidates in CANDIDATES.items():
        if any(n not in rows[0][1] for n in candidates[-1]):
            continue  # measured without the back pass
        held, chosen = nested_cross_fit(rows, candidates, directions)
        scores, right = np.array([s for _, s, _ in held]), np.array([ok for *_, ok in held], dtype=bool)
        names, best_auroc = select_features(rows, candidates, directions)
        entry = fit_scorer(rows, names, directions)
        entry["held_out_auroc"] = {"all": rounded_auroc(scores, right)} | {
            d: rounded_auroc(scores[[h[0] == d for h in held]], right[[h[0] == d for h in held]])
            for d in directions}
        entry["selection"] = {
            "candidates": len(candidates), "chosen_on_each_half": [list(c) for c in chosen],
            # the figure selection flatters: the best candidate's AUROC on the halves it was chosen on
            "best_of_candidates_auroc": None if np.isnan(best_auroc) else round(best_auroc, 4)}
        entry["bands"] = score_bands(scores, right, rule["min_region_outputs"])
        result[kind] = entry
    return result, ""


def measure(model_dir: Path, rows: list[dict[str, str]], beam: int, length_penalty: float,
            rule: dict[str, Any] | None = None) -> dict[str, Any]:
    rule = {**RULE, **(rule or {})}
    translator = Translator.from_dir(model_dir)
    methods = {}
    for method, settings in (("beam", {"beam": beam, "length_penalty": length_penalty}), ("greedy", {})):
        kept, skipped, features = matching(translator, rows, back=True, method=method, **settings)
        methods[method] = calibrate(kept, skipped, settings, rule)
        methods[method]["scorers"], why = scorers(features, kept, rule)
        if why:
            methods[method]["scorer_reason"] = why
    kept, skipped, _ = matching(translator, rows, method="sample", **SAMPLING)
    matched = sum(len(ps) for ps in kept.values())
    methods["sample"] = {
        "calibrated": False, "settings": SAMPLING, "outputs": len(rows), "matched": matched,
        "reason": (f"a sampled output is random, so it is rarely the text that was judged: sampled once "
                   f"(temperature 1, seed 0), {matched} of {len(rows)} outputs matched the judged translation")}
    return {"format": FORMAT, "judged_file": JUDGED_FILE, "judged_outputs": len(rows),
            "rule": {**rule, "edges_percent": list(EDGES)}, "methods": methods}
