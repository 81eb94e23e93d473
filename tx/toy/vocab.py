"""A word-level tokenizer for toy tasks, in the shipped tokenizer.json format, so the exported model runs through
`runtime.OnnxTranslator` like the real translator: the source is `<2out> tokens </s>`, the target `<s> tokens </s>`.

Whitespace-split words, one id each; the specials sit at the ids every tokenizer of the project uses (0..5), then
the one language tag of the toy direction "in -> out" (runtime.toy.TAG), then the task's symbols.
"""
from __future__ import annotations

from collections.abc import Sequence

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import models, pre_tokenizers

from runtime.tokenizer import SPECIALS, UNK, Tokenizer
from runtime.toy import TAG


def toy_tokenizer(symbols: Sequence[str]) -> Tokenizer:
    """SPECIALS, <2out>, then `symbols` (each a whitespace-free word), one id each."""
    vocab = {token: i for i, token in enumerate([*SPECIALS, TAG])}
    for symbol in symbols:
        if not symbol or any(c.isspace() for c in symbol):
            raise ValueError(f"a token must be one non-empty word, got {symbol!r}")
        vocab.setdefault(symbol, len(vocab))
    hf = HFTokenizer(models.WordLevel(vocab, unk_token=UNK))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    hf.add_special_tokens([*SPECIALS, TAG])  # decode(skip_special_tokens=True) leaves them out
    return Tokenizer(hf)
