"""What the Translate page's sidebar chose, as the search's arguments and as the settings a result is kept under.
Pure: no streamlit."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Decoding:
    """The sidebar's choices, one field per widget."""
    direction: tuple[str, str]  # (source, target) language codes
    method: str  # "beam", "greedy" or "sample" (runtime.text.METHODS)
    beam: int  # beam size (beam search only)
    length_penalty: float  # GNMT α
    stop_early: bool  # beam search stops once a beam's worth has finished (CTranslate2's rule)
    temperature: float  # sampling only, as the next three
    top_k: int  # 0 = off
    top_p: float  # 1 = off
    seed: int
    precision: str  # "fp32" or "int8"
    provider: str  # the execution provider asked for
    prefix: str = ""  # "Start the translation with…": CTranslate2's target_prefix ("" = none)
    n_best: int = 1  # beam search: how many of the best hypotheses to list (num_hypotheses, <= beam)

    def search(self) -> dict[str, Any]:
        """The keyword arguments of OnnxTranslator.translate for these choices (cross-attention recorded)."""
        src, tgt = self.direction
        return {"src_lang": src, "tgt_lang": tgt, "method": self.method, "beam": self.beam,
                "length_penalty": self.length_penalty, "temperature": self.temperature, "top_k": self.top_k,
                "top_p": self.top_p, "seed": self.seed, "attention": "cross",
                "patience": 1.0 if self.stop_early and self.method == "beam" else None}

    def steering(self, lines: int, alignment: bool = True) -> dict[str, Any]:
        """translate_n_best's steering arguments for `lines` texts: the same prefix for each, the n best (beam
        search only: greedy finds one, sampling's draws are another thing), and the word alignment."""
        return {"target_prefix": [self.prefix] * lines if self.prefix.strip() else None,
                "num_hypotheses": min(self.n_best, self.beam) if self.method == "beam" else 1,
                "alignment": alignment}

    def settings(self, text: str) -> dict[str, Any]:
        """Everything a result depends on, in the order a change is named: a result made with other values is
        dropped. Only the method's own settings count (a sampling slider moved under beam search changes none)."""
        current = {"direction": self.direction, "text": text, "method": self.method, "precision": self.precision,
                   "provider": self.provider, "length penalty": self.length_penalty}
        if self.method == "beam":
            current.update({"beam size": self.beam, "stopping": "once a beam's worth finished" if self.stop_early
                            else "exact"})
            if self.n_best > 1:
                current["n-best size"] = self.n_best
        if self.prefix.strip():
            current["start"] = self.prefix.strip()
        if self.method == "sample":
            current.update({"temperature": self.temperature, "top-k": self.top_k, "top-p": self.top_p,
                            "seed": self.seed})
        return current


def first_change(before: dict[str, Any], now: dict[str, Any]) -> str | None:
    """The name of the first setting that differs between a result's settings and the current ones ("settings"
    where only a name went missing); None when they are the same."""
    if before == now:
        return None
    return next((name for name, value in now.items() if before.get(name) != value), "settings")
