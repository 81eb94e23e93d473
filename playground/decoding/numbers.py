"""The Decoding explorer's words, tables and downloads, from the numbers one run stored (run.py): temperature,
top-k and top-p applied to a step's log-probs, the sentences under the figures, the comparison table, the CSV and
JSON files."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from runtime.decoding import keep_top_k, keep_top_p, softmax

from .run import LENGTH_PENALTY


def filtered(log_probs: np.ndarray, temperature: float, top_k: int, top_p: float) -> tuple[np.ndarray, float]:
    """One step's distribution after temperature, top-k and top-p (probabilities summing to 1), and the share of the
    tempered distribution the filters removed."""
    tempered = log_probs[None, :].astype(np.float64) / temperature
    kept = keep_top_p(keep_top_k(tempered, top_k), top_p)
    before, after = softmax(tempered)[0], softmax(kept)[0]
    return after, float(before[~np.isfinite(kept[0])].sum())


def removed_words(removed: float, kept: int, vocab: int, top_k: int, top_p: float) -> str:
    if top_k == 0 and top_p >= 1.0:
        return f"No filter: all {vocab:,} tokens keep their probability."
    kept_words = "the one token kept gets all of it (100%)" if kept == 1 else \
        f"the {kept:,} kept are renormalised to sum to 100%"
    return (f"Top-k and top-p removed {removed:.1%} of the probability: {vocab - kept:,} of {vocab:,} "
            f"token{'s' * (vocab - kept != 1)} dropped; {kept_words}.")


def filters_words(temperature: float, top_k: int, top_p: float) -> str:
    return f"T = {temperature:g}, top-k = {top_k or 'off'}, top-p = {top_p:g}"


def step_title(step: int, temperature: float, top_k: int, top_p: float) -> str:
    return f"Step {step}: the next-token distribution ({filters_words(temperature, top_k, top_p)})"


def chosen_words(pieces: list[str], step: int, log_prob: float) -> str:
    """What greedy has generated before `step` and the token it chooses there, with the model's probability."""
    return (f"Generated so far: `{' '.join(['<s>', *pieces[:step - 1]]) }` → greedy chooses **`{pieces[step - 1]}`** "
            f"(model probability {float(np.exp(log_prob)):.1%}).")


BARS_NOTE = (" Red: the token greedy decoding chose (the most probable one, whatever the sliders say). "
             "Temperature divides the log-probs before the softmax: below 1 sharpens, above 1 flattens.")


def tree_words(beam: int) -> str:
    return (f"Beam size {beam}, GNMT length penalty α = {LENGTH_PENALTY}: "
            "score = log-prob / ((5 + length) / 6)^α. "
            "Each step ranks the 2 × beam best extensions of the live beams; the best beam-size ones that do not end "
            "become the next beams, those ending with </s> are offered as finished, the rest are pruned. Red: the "
            "path of the hypothesis beam search returns. Hover a node for its raw and length-penalised scores.")


def compared_rows(outputs: dict) -> list[dict]:
    """The three-way comparison as table rows: method name -> its runtime Translation."""
    return [{"method": name, "translation": out.text, "score (normalised)": round(out.score, 4),
             "confidence": f"{out.confidence:.1%}"} for name, out in outputs.items()]


def compared_words(temperature: float, top_k: int, top_p: float, seed: int) -> str:
    return (f"Score: log-prob / ((5 + length) / 6)^{LENGTH_PENALTY} for every method, so they compare. "
            f"Sampling uses the sliders above ({filters_words(temperature, top_k, top_p)}) and seed {seed}.")


def best_path(nodes: list[dict]) -> list[int]:
    """Ids from the first step to the node marked best: the hypothesis beam search returned."""
    by_id = {n["id"]: n for n in nodes}
    node = next(n for n in nodes if n["best"])
    ids = []
    while node is not None:
        ids.append(node["id"])
        node = by_id.get(node["parent"])
    return ids[::-1]


def distributions_csv(log_probs: np.ndarray, vocab: list[str], temperature: float, top_k: int, top_p: float,
                      per_step: int = 50) -> bytes:
    """Each step's `per_step` most probable tokens: the model's log-prob and the probability after the filters."""
    rows = []
    for step, lp in enumerate(log_probs, 1):
        probs, _ = filtered(lp, temperature, top_k, top_p)
        for i in np.argsort(-lp, kind="stable")[:per_step]:
            rows.append({"step": step, "token_id": int(i), "token": vocab[i], "log_prob": float(lp[i]),
                         "prob": float(np.exp(lp[i])), "prob_filtered": float(probs[i])})
    return pd.DataFrame(rows).to_csv(index=False).encode("utf-8")


def tree_json(nodes: list[dict]) -> bytes:
    return json.dumps({"length_penalty": LENGTH_PENALTY, "nodes": nodes}, indent=1).encode("utf-8")
