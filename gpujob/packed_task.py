"""Translation training over a packed corpus (`gpujob.corpus`): `tx.tasks.TranslateTask` with its rows, mix and
vocabulary taken from the pack instead of TSV files and a fresh BPE training, so the GPU machine spends no time on
either and every planned run sees the same ids.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tx.tasks.translate import SELECT_BY, TranslateConfig, TranslateTask, read_everyday
from tx.tokenizer import Tokenizer

from .corpus import PackedCorpus, PackedPairs, PackSettings


class PackedTranslateTask(TranslateTask):
    """`cfg.data_dir` is an unpacked corpus folder; the run's data settings must be the pack's."""

    def __init__(self, cfg: TranslateConfig, tokenizer: Tokenizer | None = None, quiet: bool = False):
        self.cfg = cfg
        if cfg.select_by not in SELECT_BY:
            raise ValueError(f"select_by must be one of {', '.join(SELECT_BY)}, got {cfg.select_by!r}")
        if cfg.init_from:
            raise ValueError("a packed corpus carries its own vocabulary: init_from (fine-tuning) is not supported")
        self.score_name = cfg.select_by
        corpus = PackedCorpus.read(Path(cfg.data_dir))
        wrong = corpus.settings().differences(PackSettings.of(cfg))
        if wrong:
            raise ValueError(f"{cfg.data_dir} was packed for other data settings than this run's ({'; '.join(wrong)});"
                             " pack again with this run's config")
        self.valid = corpus.sets["valid"]
        self.docs_valid = corpus.sets.get("docs_valid", [])[:cfg.eval_docs] if cfg.eval_docs else []
        self.everyday = read_everyday() if cfg.eval_everyday else []
        self.source = None
        self.directions = [tuple(d.split("-")) for d in cfg.directions.split(",")]
        meta = {"directions": [list(d) for d in self.directions], "max_src_len": cfg.max_src_len}
        self.setup(tokenizer or corpus.tokenizer, meta, corpus.train, self.valid,
                   f"{len(corpus.train):,} packed train pairs × {len(self.directions)} directions", quiet)

    def examples(self, rows) -> list[tuple[list[int], list[int]]]:
        """As TranslateTask.examples, from the packed ids when given packed pairs (text rows: tokenised here)."""
        if not isinstance(rows, PackedPairs):
            return super().examples(rows)
        tok, out = self.tokenizer, []
        target_room = self.cfg.model.max_len - 1
        ids = {lang: rows.ids(lang) for lang in {lang for d in self.directions for lang in d}}
        for src_lang, tgt_lang in self.directions:
            tag = tok.token_to_id(f"<2{tgt_lang}>")
            for s, t in zip(ids[src_lang], ids[tgt_lang], strict=True):
                out.append(([tag] + s[:self.cfg.max_src_len - 2] + [tok.eos_id], t[:target_room]))
        return out


def example_cost_counts(pairs: PackedPairs, cfg: TranslateConfig) -> dict[int, int]:
    """{cost: examples}: every training example (each pair in each direction) by its cost in padded tokens, as
    `PackedTranslateTask.examples` and `TranslateTask.make_batches` count it; what the number of steps per epoch
    depends on (`batches_per_epoch`), small enough to record with the pack."""
    lengths = {lang: np.diff(pairs.arrays[f"{lang}_offsets"]) for lang in ("de", "en")}
    costs = []
    for direction in cfg.directions.split(","):
        src_lang, tgt_lang = direction.split("-")
        source = np.minimum(lengths[src_lang], cfg.max_src_len - 2) + 2  # <2xx> ... </s>
        target = np.minimum(lengths[tgt_lang], cfg.model.max_len - 1) + 1  # shifted by <s> or </s>
        costs.append(np.maximum(source, target))
    values, counts = np.unique(np.concatenate(costs), return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


def batches_per_epoch(cost_counts: dict[int, int], batch_tokens: int, batch_rows: int) -> int:
    """How many batches `tx.batching.token_batches` cuts from examples of these costs: it fills batches in order of
    cost (the seed only reorders equal costs), so the count follows from the costs alone."""
    batches, rows, longest = 0, 0, 0
    for cost in sorted(cost_counts):
        for _ in range(cost_counts[cost]):
            if rows and (max(longest, cost) * (rows + 1) > batch_tokens or rows >= batch_rows):
                batches, rows, longest = batches + 1, 0, 0
            rows, longest = rows + 1, max(longest, cost)
    return batches + (rows > 0)


def epochs_line(pack_info: dict, config_file: Path) -> str:
    """One line: how many times the planned run (its max_time, batch_tokens, batch_rows) sees each packed pair, at
    the measured steps a second; or why that is unknown."""
    from tx.run_setup import make_config

    from .plan import MAX_EPOCHS, STEPS_PER_S, epochs_in

    cfg = make_config("translate", config_file, [])[0]
    counts = {int(k): v for k, v in pack_info.get("example_costs", {}).items()}
    if not counts or not cfg.max_time:
        return "epochs unknown: the pack records no example costs (pack again) or the run has no max_time"
    batches = batches_per_epoch(counts, cfg.batch_tokens, cfg.batch_rows)
    epochs = epochs_in(cfg.max_time, batches)
    return (f"the run sees each of its {pack_info['mixed_rows']:,} pairs about {epochs:.1f} times in "
            f"{cfg.max_time:.0f} s ({batches:,} batches an epoch at {cfg.batch_tokens:,} tokens, {cfg.batch_rows:,} "
            f"rows; {STEPS_PER_S:.0f} steps/s measured on an H200; planned at most {MAX_EPOCHS:.0f})")
