"""How much of a text a model's tokenizer knows: the basis of an honest "this is outside what I know".

The BPE tokenizers map every character they never saw in training (emoji, CJK, Arabic, ...) to
`<unk>`, and a model still returns a confident-looking answer for a row of `<unk>`s. Two measures
say when not to trust it: the share of pieces that are `<unk>`, and the share of letters that
are not Latin script (the models were trained on German and English only).
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

UNKNOWN_LIMIT = 0.3  # above this, a third of what the model sees is one meaningless symbol
NON_LATIN_LIMIT = 0.5  # above this, most words are in a script the model never read


@dataclass(frozen=True)
class Coverage:
    unknown_share: float  # share of token pieces that are <unk>
    non_latin_share: float  # share of letters (str.isalpha) outside the Latin script
    letters: int  # letters in the text


def coverage(text: str, tokens: list[str], unk_token: str = "<unk>") -> Coverage:
    letters = [ch for ch in text if ch.isalpha()]
    non_latin = sum(not unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
    return Coverage(unknown_share=sum(t == unk_token for t in tokens) / len(tokens) if tokens else 0.0,
                    non_latin_share=non_latin / len(letters) if letters else 0.0, letters=len(letters))


def warning(c: Coverage) -> str | None:
    """A plain-language warning when the input is mostly outside what the model was trained on, else None."""
    if c.letters == 0:
        reason = "it has no letters at all (only emoji, symbols or digits)"
    elif c.non_latin_share > NON_LATIN_LIMIT:
        reason = f"{c.non_latin_share:.0%} of its letters are in a script the model never read"
    elif c.unknown_share > UNKNOWN_LIMIT:
        reason = f"{c.unknown_share:.0%} of its pieces are unknown to the tokenizer (emoji or rare symbols)"
    else:
        return None
    return f"This text is mostly outside what the model was trained on: {reason}. Its output means little."
