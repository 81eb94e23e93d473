"""One input decoded once for the Decoding explorer: greedy with every step's next-token log-probs, and beam search
with its tree (recorded by runtime.decoding.BeamTree). The page's sliders then work on these stored numbers."""
from __future__ import annotations

from typing import Any

import numpy as np

from runtime.batching import pad
from runtime.coverage import coverage
from runtime.coverage import warning as coverage_warning
from runtime.decoding import BeamTree, beam_search, greedy

LENGTH_PENALTY = 0.6  # the Translate page's default


class StepRecorder:
    """A `DecoderBackend` that passes everything through and keeps a copy of each step's log-probs of row 0."""

    def __init__(self, backend):
        self.backend, self.steps = backend, []
        self.max_source_len, self.max_target_len = backend.max_source_len, backend.max_target_len
        self.encode, self.reorder, self.top_k = backend.encode, backend.reorder, backend.top_k
        self.cross_attention, self.attention = backend.cross_attention, backend.attention

    def step(self, tokens, state, attention=False):
        log_probs, state = self.backend.step(tokens, state, attention)
        self.steps.append(np.array(log_probs[0], dtype=np.float32))
        return log_probs, state


def explore(model, direction: tuple[str, str], text: str, beam: int) -> dict[str, Any]:
    """Run the model once for this input: greedy with its steps' log-probs, beam search with its tree (`nodes`:
    BeamTree's records, each with its token's piece)."""
    tok = model.tokenizer
    src, truncated = model.source_ids(text, direction[1])
    src_ids, src_mask = pad([src], tok.pad_id)
    recorder = StepRecorder(model.backend)
    path = greedy(recorder, src_ids, src_mask, bos_id=tok.bos_id, eos_id=tok.eos_id)[0]
    tree = BeamTree()
    best = beam_search(model.backend, src_ids, src_mask, beam=beam, length_penalty=LENGTH_PENALTY,
                       bos_id=tok.bos_id, eos_id=tok.eos_id, observer=tree)[0]
    nodes = [dict(r, piece=tok.id_to_token(r["token"])) for r in tree.nodes()]
    return {"log_probs": np.stack(recorder.steps), "tokens": path.tokens, "pieces": tok.tokens(path.tokens),
            "greedy_text": tok.decode(path.tokens), "greedy_log_prob": path.log_prob,
            "beam_text": tok.decode(best.tokens), "beam_tokens": best.tokens, "beam_score": best.score,
            "nodes": nodes, "truncated": truncated,
            "warning": coverage_warning(coverage(text, tok.tokens(src[1:-1]))),
            "vocab": [tok.id_to_token(i) for i in range(tok.vocab_size)]}
