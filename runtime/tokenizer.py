"""Subword tokenizers (HF `tokenizers` BPE), wrapped to the small interface the models need.
(Training one is `tx.tokenizer.train_tokenizer`'s job; this module only loads and runs them.)

One joint German+English vocabulary for translation (so source, target and generator can share
one embedding, paper §3.4) and one for the reviews. Design choices, and why:
- NFKC normalisation: ligatures, full-width forms and compatibility characters map to the
  letters people mean ("ﬁ" -> "fi"); control characters are dropped so they never reach the model.
- Metaspace pre-tokenisation: spaces become "▁" inside tokens, so `decode` gives the text back
  with its own spacing ("don't", "Straße.", "„Ja“") instead of re-inventing punctuation rules.
- Unknown characters (emoji, scripts absent from training) become `<unk>`; `decode` drops it.
- The specials sit at fixed ids 0..5 in every tokenizer we train: `<pad>` = 0 matches the
  models' `pad_id`, and `<2en>`/`<2de>` are the target-language tags of the translator.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer as HFTokenizer

SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "<2en>", "<2de>"]
PAD, BOS, EOS, UNK = SPECIALS[:4]
MASK = "<mask>"  # only in tokenizers trained for masked-language-model pretraining (appended after SPECIALS)
CONTROL_CHARS = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u2028-\u202f\ufeff]"


class Tokenizer:
    """Text <-> ids. `encode` adds no specials; callers add `<2xx>`, `<s>`, `</s>` where they belong."""

    def __init__(self, hf: HFTokenizer):
        self.hf = hf
        ids = [hf.token_to_id(tok) for tok in SPECIALS[:4]]
        if any(i is None for i in ids):
            missing = [tok for tok, i in zip(SPECIALS, ids, strict=False) if i is None]
            raise ValueError(f"tokenizer lacks the special tokens {missing}")
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = ids
        self.vocab_size = hf.get_vocab_size()

    # --- persistence -------------------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> Tokenizer:
        return cls(HFTokenizer.from_file(str(path)))

    @classmethod
    def from_str(cls, text: str) -> Tokenizer:
        return cls(HFTokenizer.from_str(text))

    def to_str(self) -> str:
        return self.hf.to_str()

    def save(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.hf.save(str(path))

    # --- text <-> ids ------------------------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        return self.hf.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self.hf.encode_batch(list(texts), add_special_tokens=False)]

    def decode(self, ids: Sequence[int]) -> str:
        """Natural text; specials (pads, tags, `</s>`, `<unk>`) are left out."""
        return self.hf.decode(list(ids), skip_special_tokens=True).strip()

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """Each id's token string, specials included ("▁" marks a preceding space), for plots."""
        return [self.hf.id_to_token(i) or UNK for i in ids]

    def id_to_token(self, i: int) -> str:
        return self.hf.id_to_token(i) or UNK

    def token_to_id(self, token: str) -> int | None:
        return self.hf.token_to_id(token)
