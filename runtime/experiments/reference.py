"""The reference set behind mean-ablation, and each head's mean output over it.

Mean-ablation replaces a head's output (its context vector, weights @ v, before W_O) by that head's mean output
over a reference set, instead of by zeros: zero is a value the head may never produce, so zeroing tests "what if
this head output something it never outputs" as much as "what if it were gone"; the mean keeps the part of the
head's output that does not depend on the input and removes the part that does.

The reference set: the 16 DE–EN sentence pairs below (hand-written everyday sentences copied from
tx/evalsets/everyday.tsv, never trained on), in both directions the model translates. Encoder heads are averaged
over every real source position (the <2xx> tag and </s> included); decoder heads over every position of the
teacher-forced reference translation (decoder inputs <s> + its pieces), so no search of the model is involved.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..batching import pad
from ..spec import HEAD_KINDS
from .model import ExperimentModel

# (German, English): the first pair of each of the 12 topics of tx/evalsets/everyday.tsv, then the second of the
# first four; small on purpose, so its means come from one batch when a page first asks for them.
REFERENCE_PAIRS: tuple[tuple[str, str], ...] = (
    ("Wo ist der Bahnhof?", "Where is the train station?"),
    ("Ich arbeite von neun bis fünf.", "I work from nine to five."),
    ("Heute ist es sehr warm.", "It is very warm today."),
    ("Wie viel kostet diese Tasche?", "How much does this bag cost?"),
    ("Ich habe morgen um zehn Uhr einen Termin beim Arzt.",
     "I have an appointment with the doctor tomorrow at ten o'clock."),
    ("Wie heißt dein Bruder?", "What is your brother's name?"),
    ("Ich trinke keinen Kaffee.", "I don't drink coffee."),
    ("Gestern habe ich einen langen Brief geschrieben.", "Yesterday I wrote a long letter."),
    ("Morgen werde ich meine Großmutter besuchen.", "Tomorrow I will visit my grandmother."),
    ("Zum Frühstück esse ich meistens Brot mit Käse.", "For breakfast I usually eat bread with cheese."),
    ("Unsere Wohnung hat drei Zimmer.", "Our flat has three rooms."),
    ("Ich habe seit gestern Kopfschmerzen.", "I have had a headache since yesterday."),
    ("Wann fährt der nächste Zug nach Berlin?", "When does the next train to Berlin leave?"),
    ("Meine Kollegin ist heute krank.", "My colleague is ill today."),
    ("Morgen soll es regnen.", "It is supposed to rain tomorrow."),
    ("Haben Sie dieses Hemd auch in Blau?", "Do you also have this shirt in blue?"),
)
REFERENCE_NAME = "16 everyday DE–EN sentence pairs (runtime.experiments.reference), both directions"

# The classifier's reference set: 16 short film reviews written for this file, 8 positive and 8 negative, one or
# two with a negation, so that no label or construction dominates the means.
REFERENCE_REVIEWS: tuple[str, ...] = (
    "a warm, funny film with a great cast",
    "the story drags and the ending makes no sense",
    "I laughed all the way through",
    "flat characters and a script full of clichés",
    "beautifully shot and wonderfully acted",
    "two hours I will never get back",
    "not perfect, but I enjoyed every minute",
    "the music was the only good thing about it",
    "a moving story told with real care",
    "boring from start to finish",
    "the best film I have seen this year",
    "the jokes fall flat and the plot is thin",
    "clever, sharp and never dull",
    "I did not like it at all",
    "a charming little film for the whole family",
    "loud, long and completely forgettable",
)
REVIEWS_NAME = "16 short film reviews, 8 positive and 8 negative (runtime.experiments.reference)"


@dataclass(frozen=True)
class HeadMeans:
    """Each head's mean output over the reference set: the fill of a mean-ablated head."""

    fill: dict[str, np.ndarray]  # kind -> (L, H, K)
    positions: dict[str, int]  # kind -> how many positions were averaged
    sentences: int  # (source, reference) pairs run, directions counted separately
    description: str  # what the means were computed over, for a page to state


def reference_examples(model: ExperimentModel,
                       pairs: Sequence[tuple[str, str]] = REFERENCE_PAIRS) -> list[tuple[list[int], list[int]]]:
    """(source ids, decoder input ids) of every pair in every direction the model translates (de->en, en->de)."""
    directions = [d for d in (("de", "en"), ("en", "de")) if d in model.translator.directions]
    if not directions:
        raise ValueError(f"the reference set is German–English; this model translates "
                         f"{', '.join(f'{s}->{t}' for s, t in model.translator.directions)}: pass pairs of its own")
    examples = []
    for src_lang, tgt_lang in directions:
        for de, en in pairs:
            source, target = (de, en) if src_lang == "de" else (en, de)
            src_ids, _ = model.translator.source_ids(source, tgt_lang)
            body = model.tokenizer.encode(target)[:model.files.max_len - 1]
            examples.append((src_ids, [model.tokenizer.bos_id, *body]))
    return examples


def mean_over(context: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """context (L, B, H, T, K), mask (B, T) True at real positions -> the mean over real positions (L, H, K)."""
    weights = mask.astype(np.float64)[None, :, None, :, None]  # (1, B, 1, T, 1)
    return ((context * weights).sum(axis=(1, 3)) / weights.sum()).astype(np.float32)


def reference_means(model: ExperimentModel, pairs: Sequence[tuple[str, str]] = REFERENCE_PAIRS) -> HeadMeans:
    """Every head's mean output over the reference set, with no head knocked out (cached on the model). The
    classifier's model (runtime.experiments.classifier) averages over REFERENCE_REVIEWS instead (`pairs` unused)."""
    key = ("reference_means", tuple(pairs))
    if key in model.cache:
        return model.cache[key]  # type: ignore[return-value]
    if model.kind == "classifier":
        model.cache[key] = means = classifier_means(model)
        return means
    examples = reference_examples(model, pairs)
    src_ids, src_mask = pad([s for s, _ in examples], model.tokenizer.pad_id)
    tgt_ids, tgt_mask = pad([t for _, t in examples], model.tokenizer.pad_id)
    encoded = model.encode(src_ids, src_mask)
    decoded = model.decode(tgt_ids, encoded["memory"], src_mask)
    fill = {"enc_self": mean_over(encoded["enc_self_context"], src_mask),
            "dec_self": mean_over(decoded["dec_self_context"], tgt_mask),
            "dec_cross": mean_over(decoded["dec_cross_context"], tgt_mask)}
    positions = {"enc_self": int(src_mask.sum()), "dec_self": int(tgt_mask.sum()), "dec_cross": int(tgt_mask.sum())}
    name = REFERENCE_NAME if tuple(pairs) == REFERENCE_PAIRS else f"{len(pairs)} given sentence pairs"
    description = (f"each head's mean output over {name}: {positions['enc_self']} source positions (encoder "
                   f"heads), {positions['dec_self']} teacher-forced reference positions (decoder heads)")
    means = HeadMeans({kind: fill[kind] for kind in HEAD_KINDS}, positions, len(examples), description)
    model.cache[key] = means
    return means


def classifier_means(model, reviews: Sequence[str] = REFERENCE_REVIEWS) -> HeadMeans:
    """The classifier's encoder heads averaged over every real position of the reference reviews."""
    ids, mask = pad([model.tokenizer.encode(text)[:model.classifier.max_len] for text in reviews],
                    model.tokenizer.pad_id)
    out = model.run(ids, mask)
    positions = int(mask.sum())
    return HeadMeans({"enc_self": mean_over(out["enc_self_context"], mask)}, {"enc_self": positions}, len(reviews),
                     f"each head's mean output over {REVIEWS_NAME}: {positions} positions")
