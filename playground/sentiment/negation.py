"""Negation, the sentiment model's known weakness: finding the negating words of a review, and the warning the
Sentiment page shows beside a label given to one. Pure: no streamlit."""
from __future__ import annotations

import re
from typing import Any

# Words that negate what follows, and contractions ending in n't (isn't, can't, don't; ’ or '), with the common
# apostrophe-less spellings. A text holding one is where the sentiment model is known to be weak: its model card
# measures that on hand-written negation probes (tx/evalsets/negation.tsv).
NEGATION_WORDS = frozenset({
    "not", "no", "never", "nothing", "nobody", "none", "nowhere", "neither", "nor", "without", "cannot",
    "hardly", "barely", "scarcely",
    "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "cant", "couldnt", "wouldnt", "shouldnt", "wont",
    "aint", "havent", "hasnt", "hadnt", "mustnt", "neednt"})
NEGATION_EVAL_FILE = "eval_negation.json"  # what `python -m tx evaluate sentiment --split negation` writes


def negations(text: str) -> list[str]:
    """The negation words of a text (NEGATION_WORDS or a word ending in n't), lower-cased, in order, each once."""
    found: list[str] = []
    for word in re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)*", text.lower()):
        plain = word.replace("’", "'")
        if (plain in NEGATION_WORDS or plain.endswith("n't")) and word not in found:
            found.append(word)
    return found



def negation_warning(text: str, scores: Any) -> str | None:
    """Where the text negates, the model's known weakness there: its accuracy on the model card's negation probes
    from `scores` (the NEGATION_EVAL_FILE that `python -m tx evaluate sentiment --split negation` left in the model
    directory; None or anything else when there is none), else the card's word. None without a negation."""
    found = negations(text)
    if not found:
        return None
    words = ", ".join(f"“{w}”" for w in found)
    try:
        confusion = scores["confusion"]["rows_gold_cols_predicted"]
        right, probes = sum(confusion[i][i] for i in range(len(confusion))), int(scores["reviews"])
        commoner = max(sum(row) for row in confusion) / probes
        measured = (f"on the model card's {probes} negation probes (hand-written sentences whose label turns on a "
                    f"negation) it was right on {right} of the {probes} ({float(scores['accuracy']):.1f}%; always "
                    f"giving the commoner label would get {commoner:.0%}).")
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError):
        measured = ("the model card measures it on hand-written negation probes (sentences whose label turns on a "
                    "negation) and gives the result (see the Model card page); the model directory holds no "
                    f"`{NEGATION_EVAL_FILE}` (what `python -m tx evaluate sentiment --split negation` writes), "
                    "so this page shows no number.")
    return (f"This review has a negation ({words}). Negation is this model's known weakness: {measured} "
            "Treat this label with extra care.")
