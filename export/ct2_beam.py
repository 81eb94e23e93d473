"""CTranslate2 against tx on beam search: the n best and the alternatives, on the same weights (fp32).

Which settings score alike (read from CTranslate2's decoding.cc, then measured):
- CTranslate2 divides a finished hypothesis' log-probability by length^α, tx by GNMT's ((5 + length) / 6)^α. At
  α = 0 both rank by the raw log-probability; at any other α they rank differently by design.
- CTranslate2 also picks its stopping rule by α. With no penalty (α = 0) a sentence stops as soon as its top beam
  has finished and n hypotheses exist ("early exit"); otherwise once round(beam × patience) hypotheses have
  finished, which is tx's `patience=1` rule. Early exit can stop before a live beam finishes above the n-th best,
  so at α = 0 its n best may differ from tx's below the first.
- So the n best are compared at tx α = 0, patience 1 against CTranslate2 α = `MATCHING_ALPHA` (1e-9): length^1e-9
  rounds to 1.0 in float32 for every length the position table allows, so its scores are the raw
  log-probabilities, and the beam × patience rule stays. Token for token, with tx's token-level n best
  (`runtime.decoding.beam_search(num_hypotheses=n)`; `translate_n_best` merges hypotheses of equal text).
- Alternatives: CTranslate2 completes each with a beam search of one hypothesis, whose early exit returns what
  tx's exact stopping returns for one hypothesis, so both run α = 0 with their default stopping. CTranslate2
  never offers `</s>` as an alternative (it sets a minimum length of 1 there); tx does when it is among the
  likeliest (a prefix that is already a whole sentence). So tx's `</s>` alternative is set aside, and
  CTranslate2's list compared up to the length of tx's others.
- CTranslate2's `translate_batch` forbids `</s>` as the first token by default (`min_decoding_length=1`); tx
  allows an empty translation, so the comparison passes `min_decoding_length=0`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from runtime.batching import pad
from runtime.decoding import beam_search
from tx.inference import Translator

MATCHING_ALPHA = 1e-9  # CTranslate2's length_penalty that scores as α = 0 but keeps its beam × patience stopping


@dataclass
class BeamAgreement:
    """CTranslate2 against tx on beam search over the same sentences (fp32), token for token."""

    sentences: int
    beam: int
    same_n_best: list[int] = field(default_factory=list)  # [n - 1]: sentences whose n best are identical lists
    alternatives: int = 0  # alternatives asked for per sentence (num_hypotheses with return_alternatives)
    same_first_alternatives: int = 0  # no prefix (the first position): the same tokens there, in the same order
    same_first_completions: int = 0  # ... and every alternative completed to the same tokens
    same_prefixed_alternatives: int = 0  # after the prefix (the first half of the reference): the same tokens
    same_prefixed_completions: int = 0  # ... and every completion identical
    differences: list[str] = field(default_factory=list)  # one line per sentence and comparison that differs


def token_n_best(ours: Translator, sources: list[list[int]], beam: int, n: int, max_len: int) -> list[list[list[int]]]:
    """Per source, tx's n best token lists (BOS excluded, </s> included), α = 0 and patience 1."""
    src_ids, src_mask = pad(sources, ours.tokenizer.pad_id)
    hyps = beam_search(ours.backend, np.asarray(src_ids), np.asarray(src_mask), max_len, bos_id=ours.tokenizer.bos_id,
                       eos_id=ours.tokenizer.eos_id, beam=beam, length_penalty=0.0, patience=1.0, num_hypotheses=n)
    return [[h.tokens for h in (row if n > 1 else [row])] for row in hyps]


def beam_check(model_dir: Path, ct2_dir: Path, rows: list[dict[str, str]], src: str, tgt: str, prefixes: list[str],
               beam: int = 4, alternatives: int = 5, max_len: int = 128) -> BeamAgreement:
    """tx against CTranslate2 on `rows` (src -> tgt): the n best for n = 1..beam, and `alternatives` alternatives
    completed by beam search, at the first position (no prefix) and after each row's prefix (export.ct2 passes
    `reference_prefix`, the first half of its reference translation)."""
    import ctranslate2

    ours = Translator.from_dir(model_dir)
    engine = ctranslate2.Translator(str(ct2_dir), device="cpu", inter_threads=1, intra_threads=1)
    tok = ours.tokenizer
    texts = [r[src] for r in rows]
    sources = [ours.source_ids(t, tgt)[0] for t in texts]
    source_tokens = [tok.tokens(s) for s in sources]
    limit = min(max_len, ours.backend.max_target_len)
    agreement = BeamAgreement(len(rows), beam, alternatives=alternatives)

    def ids(hypotheses: list[list[str]]) -> list[list[int]]:
        return [[tok.token_to_id(t) for t in h] for h in hypotheses]

    for n in range(1, beam + 1):
        mine = token_n_best(ours, sources, beam, n, limit)
        theirs = engine.translate_batch(source_tokens, beam_size=beam, num_hypotheses=n, patience=1.0,
                                             length_penalty=MATCHING_ALPHA, max_decoding_length=limit,
                                             min_decoding_length=0, return_end_token=True)
        same = [m == ids(t.hypotheses) for m, t in zip(mine, theirs, strict=True)]
        agreement.same_n_best.append(sum(same))
        agreement.differences += [f"{src}->{tgt} #{i} {texts[i]!r}: the {n} best differ"
                                  for i, ok in enumerate(same) if not ok]
    for where, target_prefix in (("first", None), ("prefixed", prefixes)):
        mine = ours.translate_n_best(texts, src, tgt, method="beam", beam=beam, length_penalty=0.0, max_len=limit,
                                     target_prefix=target_prefix, return_alternatives=True,
                                     num_hypotheses=alternatives)
        prefix_tokens = None if target_prefix is None else [tok.tokens(ours.prefix_ids(p)) for p in target_prefix]
        theirs = engine.translate_batch(source_tokens, target_prefix=prefix_tokens, beam_size=beam,
                                             length_penalty=0.0, max_decoding_length=limit, min_decoding_length=0,
                                             return_end_token=True, return_alternatives=True,
                                             num_hypotheses=alternatives)
        same_tokens = same_completions = 0
        for i, (my_alts, their_alts) in enumerate(zip(mine, theirs, strict=True)):
            at = 0 if prefix_tokens is None else len(prefix_tokens[i])
            my_alts = [a for a in my_alts if a.token_ids[at] != tok.eos_id]  # CTranslate2 never offers </s>
            their_rows = ids(their_alts.hypotheses)[:len(my_alts)]  # so it has one more where tx offered </s>
            tokens_ok = [a.token_ids[at] for a in my_alts] == [h[at] for h in their_rows]
            completions_ok = [a.token_ids for a in my_alts] == their_rows
            same_tokens, same_completions = same_tokens + tokens_ok, same_completions + completions_ok
            if not completions_ok:
                what = "completions" if tokens_ok else "alternatives"
                agreement.differences.append(f"{src}->{tgt} #{i} {texts[i]!r} ({where} position): {what} differ")
        if where == "first":
            agreement.same_first_alternatives, agreement.same_first_completions = same_tokens, same_completions
        else:
            agreement.same_prefixed_alternatives, agreement.same_prefixed_completions = same_tokens, same_completions
    return agreement


def report(a: BeamAgreement, src: str, tgt: str) -> str:
    """The agreement as the lines `python -m export ct2 --beam` prints."""
    n_best = ", ".join(f"n={n}: {same}" for n, same in enumerate(a.same_n_best, start=1))
    return (f"{src}->{tgt} beam {a.beam} (tx α=0 patience 1, CTranslate2 α={MATCHING_ALPHA:g}): n best identical "
            f"of {a.sentences}: {n_best}\n"
            f"{src}->{tgt} beam {a.beam} alternatives ({a.alternatives}, α=0): at the first position the same "
            f"tokens for {a.same_first_alternatives}, every completion identical for {a.same_first_completions}; "
            f"after the prefix the same tokens for {a.same_prefixed_alternatives}, every completion identical for "
            f"{a.same_prefixed_completions}, of {a.sentences}")
