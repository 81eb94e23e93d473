"""Translation: one bidirectional DE↔EN model. Every pair trains both DE→EN and EN→DE, the source starting with
the target-language tag `<2en>`/`<2de>` (as in multilingual NMT). Why one model: the joint vocabulary and shared
embeddings already tie the languages, two directions double the training signal for the shared encoder/decoder,
and the app ships one set of weights (half the size budget of two models).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import sacrebleu
import torch
import torch.nn.functional as F
from torch import nn

from runtime.text import DEFAULT_MAX_SRC_LEN
from runtime.tsv import read_tsv

from ..batching import token_batches
from ..checkpoint import TOKENIZER_FILE, load_model_dir
from ..config import Seq2SeqConfig
from ..inference import DEFAULT_DIRECTIONS, Translator
from ..model import Seq2SeqTransformer
from ..tokenizer import Tokenizer, train_tokenizer
from ..trainer import TrainConfig, model_field
from .base import Batch, Rows, TextTask, padded, perplexity
from .mix import mix_rows, parse_mix

SELECT_BY = ("valid_bleu", "everyday_bleu", "mean_bleu")
# The hand-written everyday dev set: never trained on (`python -m corpus prepare` keeps it out of train), scored
# during training to pick checkpoints (select_by) and by `python -m tx evaluate --split everyday`.
EVERYDAY = Path(__file__).resolve().parents[1] / "evalsets" / "everyday.tsv"


def read_everyday(path: Path = EVERYDAY) -> list[dict[str, str]]:
    """The everyday dev set's rows: de, en, topic."""
    return read_tsv(path)


@dataclass
class TranslateConfig(TrainConfig):
    """Training a bidirectional DE↔EN `Seq2SeqTransformer` on the prepared corpus."""

    out_dir: str = "runs/translate"
    data_dir: str = "data/processed/translate"  # train/valid/test.tsv with columns de, en, kind, source
    use_phrases: bool = True  # also train on the phrase and word pairs (not only whole sentences)
    mix: str = ""  # sampling weight per source or source.kind, "ding=1,ding.word=0.1,catalogs=0.3" (tx.tasks.mix)
    init_from: str = ""  # a translation model dir: continue from its tokenizer and weights (fine-tuning)
    select_by: str = "valid_bleu"  # metric that picks the best checkpoint: valid_bleu, everyday_bleu, mean_bleu
    eval_docs: int = 200  # docs_valid DE→EN sentences translated greedily at each evaluation (0 = skip)
    eval_everyday: bool = True  # also score the hand-written everyday dev set (tx/evalsets/everyday.tsv)
    # comma-separated src-tgt directions trained into the one model
    directions: str = ",".join("-".join(d) for d in DEFAULT_DIRECTIONS)
    max_src_len: int = DEFAULT_MAX_SRC_LEN  # source tokens kept (tag and </s> included); longer texts are cut
    eval_sentences: int = 300  # valid DE→EN sentences translated greedily at each evaluation (BLEU)
    lr: float = 1e-3
    warmup_steps: int = 1000
    batch_tokens: int = 6000
    # rows per batch at most: a batch of Ding's one-word pairs (~6 tokens) reaches batch_tokens only with thousands
    # of rows, so at 1024 each such step carries a fraction of the tokens a sentence step does, at nearly the same
    # cost (a GPU run spent 64% of its steps on word pairs that way: configs/README.md)
    batch_rows: int = 1024
    eval_every: int = 1000
    average_last: int = 3
    # The model (tx.config.Seq2SeqConfig's defaults but for these). vocab_size: the joint BPE vocabulary trained on
    # the train split; the model gets the trained tokenizer's size and pad id. n_decoder_layers is given so that
    # setting model.n_layers alone changes the encoder only.
    model: Seq2SeqConfig = model_field(Seq2SeqConfig, vocab_size=10000, n_decoder_layers=3)


def example_costs(examples: list[tuple[list[int], list[int]]]) -> list[int]:
    """Each (source, target) example's cost in padded tokens: the longer of its source and its shifted target."""
    return [max(len(s), len(t) + 1) for s, t in examples]


class TranslateTask(TextTask):
    name = "translate"

    def __init__(self, cfg: TranslateConfig, tokenizer: Tokenizer | None = None, quiet: bool = False):
        self.cfg = cfg
        if cfg.select_by not in SELECT_BY:
            raise ValueError(f"select_by must be {', '.join(SELECT_BY[:-1])} or {SELECT_BY[-1]}, got {cfg.select_by!r}")
        self.score_name = cfg.select_by
        data = Path(cfg.data_dir)
        train = read_tsv(data / "train.tsv")
        if not cfg.use_phrases:
            train = [r for r in train if r.get("kind", "sentence") == "sentence"]
        train = mix_rows(train, parse_mix(cfg.mix), cfg.seed)
        self.valid = read_tsv(data / "valid.tsv")
        self.docs_valid = read_tsv(data / "docs_valid.tsv")[:cfg.eval_docs] \
            if cfg.eval_docs and (data / "docs_valid.tsv").exists() else []
        self.everyday = read_everyday() if cfg.eval_everyday else []
        self.source = None
        if cfg.init_from:  # fine-tuning: the model's own tokenizer, so its embeddings keep their meaning
            self.source = load_model_dir(cfg.init_from, "seq2seq")
            tokenizer = tokenizer or Tokenizer.load(Path(cfg.init_from) / TOKENIZER_FILE)
        if tokenizer is None:
            tokenizer = train_tokenizer((r[c] for r in train for c in ("de", "en")), vocab_size=cfg.model.vocab_size)
        self.directions = [tuple(d.split("-")) for d in cfg.directions.split(",")]
        meta = {"directions": [list(d) for d in self.directions], "max_src_len": cfg.max_src_len}
        self.setup(tokenizer, meta, train, self.valid, f"{len(train):,} train pairs × {len(self.directions)} "
                   "directions", quiet)

    def model_config(self) -> Seq2SeqConfig:
        if self.source is not None:  # the shape is the source model's; only dropout follows this run
            return replace(self.source.config, dropout=self.cfg.model.dropout)
        return super().model_config(tgt_vocab_size=self.tokenizer.vocab_size)  # one joint vocabulary

    def build_model(self) -> Seq2SeqTransformer:
        model = Seq2SeqTransformer(self.model_config())
        if self.source is not None:
            model.load_state_dict(self.source.state_dict())
        return model

    def examples(self, rows: Rows) -> list[tuple[list[int], list[int]]]:
        """(source ids with tag and </s>, target ids without specials) for every row and direction."""
        tok, out = self.tokenizer, []
        target_room = self.cfg.model.max_len - 1  # <s> + target or target + </s> must fit the positional table
        for src_lang, tgt_lang in self.directions:
            tag = tok.token_to_id(f"<2{tgt_lang}>")
            srcs = tok.encode_batch([r[src_lang] for r in rows])
            tgts = tok.encode_batch([r[tgt_lang] for r in rows])
            for s, t in zip(srcs, tgts, strict=True):
                out.append(([tag] + s[:self.cfg.max_src_len - 2] + [tok.eos_id], t[:target_room]))
        return out

    def make_batches(self, rows: Rows, max_tokens: int, seed: int) -> list[Batch]:
        examples = self.examples(rows)
        groups = token_batches(example_costs(examples), max_tokens, seed, max_rows=self.cfg.batch_rows)
        tok = self.tokenizer
        batches = []
        for group in groups:
            src = padded([examples[i][0] for i in group], tok.pad_id)
            tgt_in = padded([[tok.bos_id] + examples[i][1] for i in group], tok.pad_id)
            tgt_out = padded([examples[i][1] + [tok.eos_id] for i in group], tok.pad_id)
            batches.append({"src_ids": src, "tgt_ids": tgt_in, "labels": tgt_out})
        return batches

    def loss(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, int]:
        logits = model(batch["src_ids"], batch["tgt_ids"])  # (B, T, V)
        labels = batch["labels"]
        loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(), ignore_index=self.tokenizer.pad_id,
                               label_smoothing=self.cfg.label_smoothing, reduction="sum")
        return loss, int((labels != self.tokenizer.pad_id).sum())

    def target_tokens(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced logits and labels at the real (not padding) target positions."""
        real = batch["labels"] != self.tokenizer.pad_id
        return model(batch["src_ids"], batch["tgt_ids"])[real], batch["labels"][real]

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        total, _, count = self.valid_pass(model, self.target_tokens)
        translator = Translator(model, self.tokenizer, self.meta)

        def bleu(rows: Rows) -> float:
            hyps = [t.text for t in translator.translate([r["de"] for r in rows], "de", "en", method="greedy")]
            return sacrebleu.corpus_bleu(hyps, [[r["en"] for r in rows]]).score

        metrics = {"valid_loss": total / max(count, 1), "valid_ppl": perplexity(total / max(count, 1)),
                   "valid_bleu": bleu(self.valid[:self.cfg.eval_sentences])}
        scores = [metrics["valid_bleu"]]
        for name, rows in (("docs_bleu", self.docs_valid), ("everyday_bleu", self.everyday)):
            if rows:
                metrics[name] = bleu(rows)
                scores.append(metrics[name])
        metrics["mean_bleu"] = sum(scores) / len(scores)
        if self.score_name not in metrics:
            raise ValueError(f"select_by={self.score_name} but that set is not evaluated in this run")
        return metrics
