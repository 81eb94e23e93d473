"""python -m bench alignment [--model-dir DIR] [--data-dir DIR] [--sentences N]: which cross-attention aligns words.

Scores every way `runtime.alignment` can read cross-attention as word alignment: each (layer, head), each
layer's mean of heads and the mean of all, at shift 0 (the step that produced a target piece) and shift 1 (the
next step, which reads it as input). The reference is the Ding dictionary itself: in a held-out sentence pair
(data/processed/translate/test.tsv, never trained on), a target word is scored when the dictionary's single-word
entries (train.tsv rows of kind "word"; English "to go" counts as "go") pair it with one or more words of the
source; the attention's link is right when it points at one of them. The target side is the reference
translation, teacher-forced (so the score is about attention, not about the model's own wording).

The candidates are ranked on one half of the sentences (even rows) and reported on the other (odd rows), so the
chosen default is not scored on the sentences that chose it. A diagonal baseline (the target word at the same
relative position) says how much attention adds. The Django catalogs are evaluation-only data: not read here.
Without data/processed: `python -m corpus prepare --corpora ding --tasks translate` makes it (apt-get download).
"""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from pathlib import Path

import torch

from runtime.alignment import AlignmentHeads, align, words
from runtime.batching import pad
from runtime.tsv import read_tsv
from tx.inference import Translator

from . import bench_parser

PUNCTUATION = re.compile(r"^\W+|\W+$")  # stripped from both ends of a word before the dictionary look-up


def normal(word: str) -> str:
    return PUNCTUATION.sub("", unicodedata.normalize("NFKC", word)).lower()


def read_dictionary(train_tsv: Path) -> set[tuple[str, str]]:
    """(German word, English word) pairs of the Ding entries that are one word a side (English "to X" verbs too)."""
    pairs = set()
    for row in read_tsv(train_tsv):
        if row.get("kind") != "word":
            continue
        de, en = row["de"].split(), row["en"].split()
        if len(en) == 2 and en[0] == "to":
            en = en[1:]
        if len(de) == 1 and len(en) == 1 and normal(de[0]) and normal(en[0]):
            pairs.add((normal(de[0]), normal(en[0])))
    return pairs


def gold_links(source: list[str], target: list[str], dictionary: set[tuple[str, str]], src_lang: str) -> dict:
    """{target word index: {source word indices the dictionary pairs it with}} for target words with any."""
    links = defaultdict(set)
    for j, tgt in enumerate(target):
        for i, src in enumerate(source):
            pair = (normal(src), normal(tgt)) if src_lang == "de" else (normal(tgt), normal(src))
            if pair in dictionary:
                links[j].add(i)
    return dict(links)


def candidates(layers: int, heads: int) -> list[AlignmentHeads]:
    out = []
    for shift in (0, 1):
        out += [AlignmentHeads(layer, head, shift) for layer in range(layers) for head in range(heads)]
        out += [AlignmentHeads(layer, None, shift) for layer in range(layers)]
        out.append(AlignmentHeads(None, None, shift))
    return out


def teacher_forced(translator: Translator, pairs: list[tuple[str, str]], tgt_lang: str, batch: int = 32):
    """Per pair: (source tokens, reference tokens with </s>, per-layer (H, T, S) cross-attention), row t being
    the step that produced reference token t, as `Translation.attention["cross"]`."""
    tok = translator.tokenizer
    out = []
    for start in range(0, len(pairs), batch):
        chunk = pairs[start:start + batch]
        sources = [translator.source_ids(src, tgt_lang)[0] for src, _ in chunk]
        targets = [tok.encode(ref)[:translator.max_src_len - 1] + [tok.eos_id] for _, ref in chunk]
        src_ids, src_mask = pad(sources, tok.pad_id)
        tgt_ids, _ = pad([[tok.bos_id] + t[:-1] for t in targets], tok.pad_id)
        cross = translator.backend.attention(src_ids, src_mask, tgt_ids)["cross"]
        for row, (src, tgt) in enumerate(zip(sources, targets, strict=True)):
            out.append((tok.tokens(src), tok.tokens(tgt), [w[row, :, :len(tgt), :len(src)] for w in cross]))
    return out


def diagonal(n_target: int, n_source: int) -> list[int]:
    return [round(j * (n_source - 1) / max(n_target - 1, 1)) for j in range(n_target)]


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("alignment", __doc__)
    parser.add_argument("--model-dir", type=Path, default=Path("models/translate"))
    parser.add_argument("--data-dir", type=Path, default=Path("data/processed"))
    parser.add_argument("--sentences", type=int, default=1500, help="held-out pairs per direction (default: all)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    data = args.data_dir / "translate"
    if not (data / "test.tsv").is_file():
        parser.error(f"no {data / 'test.tsv'}: run `python -m corpus prepare --corpora ding --tasks translate`")
    dictionary = read_dictionary(data / "train.tsv")
    test = read_tsv(data / "test.tsv")[:args.sentences]
    translator = Translator.from_dir(args.model_dir)
    config = translator.model.config
    options = candidates(config.n_decoder_layers, config.n_heads)
    print(f"model {args.model_dir}; {len(dictionary):,} one-word Ding pairs; {len(test)} held-out pairs a direction")
    hits = {(h, half): 0 for h in options for half in (0, 1)}
    base = {0: 0, 1: 0}
    scored = {0: 0, 1: 0}
    for src_lang, tgt_lang in (("de", "en"), ("en", "de")):
        rows = teacher_forced(translator, [(r[src_lang], r[tgt_lang]) for r in test], tgt_lang)
        for n, (src_tokens, tgt_tokens, cross) in enumerate(rows):
            source, target = [w for w, _ in words(src_tokens)], [w for w, _ in words(tgt_tokens)]
            gold = gold_links(source, target, dictionary, src_lang)
            if not gold:
                continue
            half = n % 2
            scored[half] += len(gold)
            guess = diagonal(len(target), len(source))
            base[half] += sum(guess[j] in links for j, links in gold.items())
            for heads in options:
                a = align(cross, src_tokens, tgt_tokens, heads)
                hits[(heads, half)] += sum(a.links[j][0] in links for j, links in gold.items())
    acc = lambda h, half: hits[(h, half)] / max(scored[half], 1)
    print(f"scored target words: {scored[0]} (even rows, ranking half), {scored[1]} (odd rows, report half)")
    print(f"diagonal baseline: {base[0] / max(scored[0], 1):.3f} / {base[1] / max(scored[1], 1):.3f}")
    print(f"{'attention read':<34} {'rank half':>9} {'report half':>11}")
    ranked = sorted(options, key=lambda h: -acc(h, 0))
    for heads in ranked:
        print(f"{heads.describe():<34} {acc(heads, 0):>9.3f} {acc(heads, 1):>11.3f}")
    best = ranked[0]
    swapped = max(options, key=lambda h: acc(h, 1))
    print(f"best on the ranking half: {best.describe()} -> {acc(best, 1):.3f} on the report half "
          f"(best on the report half itself: {swapped.describe()}, {acc(swapped, 1):.3f})")
    print(f"AlignmentHeads(layer={best.layer}, head={best.head}, shift={best.shift})")
    return 0
