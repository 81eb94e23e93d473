"""Translation training over a packed corpus (`gpujob.corpus`): `tx.tasks.TranslateTask` with its rows, mix and
vocabulary taken from the pack instead of TSV files and a fresh BPE training, so the GPU machine spends no time on
either and every planned run sees the same ids.
"""
from __future__ import annotations

from pathlib import Path

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
