"""Training the subword tokenizers (HF `tokenizers` BPE); loading and running them is `runtime.tokenizer`'s job."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, trainers
from tokenizers import Tokenizer as HFTokenizer

from runtime.tokenizer import BOS, CONTROL_CHARS, EOS, MASK, PAD, SPECIALS, UNK, Tokenizer

__all__ = ["Tokenizer", "train_tokenizer", "SPECIALS", "PAD", "BOS", "EOS", "UNK", "MASK", "CONTROL_CHARS"]


def train_tokenizer(texts: Iterable[str], vocab_size: int = 10000, min_frequency: int = 2,
                    lowercase: bool = False, extra_specials: Sequence[str] = ()) -> Tokenizer:
    """Train a BPE tokenizer on `texts` (train split only!) with SPECIALS at ids 0..5, then extra_specials."""
    hf = HFTokenizer(models.BPE(unk_token=UNK))
    steps = [normalizers.NFKC(), normalizers.Replace(Regex(CONTROL_CHARS), ""),
             normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip()]
    if lowercase:
        steps.append(normalizers.Lowercase())
    hf.normalizer = normalizers.Sequence(steps)
    hf.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    hf.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=[*SPECIALS, *extra_specials],
                                  show_progress=False)
    hf.train_from_iterator(texts, trainer=trainer)
    return Tokenizer(hf)
