"""The two training tasks: what the generic `Trainer` is told about data, loss and evaluation.

Translation is one bidirectional model: every pair trains both DE→EN and EN→DE, the source
starting with the target-language tag `<2en>`/`<2de>` (as in multilingual NMT). Why one model:
the joint vocabulary and shared embeddings already tie the languages, two directions double
the training signal for the shared encoder/decoder, and the app ships one set of weights
(half the size budget of two models).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sacrebleu
import torch
import torch.nn.functional as F
from torch import nn

from .batching import pad_rows, token_batches
from .checkpoint import TOKENIZER_FILE, load_model_dir, save_model_dir
from .config import ClassifierConfig, Seq2SeqConfig
from .data import read_tsv
from .inference import Translator
from .model import SentimentClassifier, Seq2SeqTransformer
from .tokenizer import Tokenizer, train_tokenizer
from .trainer import TrainConfig

LABELS = ["negative", "positive"]


@dataclass
class TranslateConfig(TrainConfig):
    """Training a bidirectional DE↔EN `Seq2SeqTransformer` on the prepared Ding pairs."""

    out_dir: str = "runs/translate"
    data_dir: str = "data/processed/translate"  # train/valid/test.tsv with columns de, en, kind
    use_phrases: bool = True  # also train on the phrase pairs (not only whole sentences)
    directions: str = "de-en,en-de"  # comma-separated src-tgt directions trained into the one model
    vocab_size: int = 10000  # joint BPE vocabulary (train split only)
    d_model: int = 256  # model width
    n_heads: int = 4  # attention heads
    n_layers: int = 3  # encoder layers
    n_decoder_layers: int = 3  # decoder layers
    d_ff: int = 1024  # feed-forward inner width
    dropout: float = 0.1  # dropout everywhere
    pre_norm: bool = False  # pre-LN instead of the paper's post-LN
    max_src_len: int = 128  # source tokens kept (tag and </s> included); longer texts are cut
    max_len: int = 256  # positional-table length of the model
    eval_sentences: int = 300  # valid DE→EN sentences translated greedily at each evaluation (BLEU)
    lr: float = 1e-3
    warmup_steps: int = 1000
    batch_tokens: int = 6000
    eval_every: int = 1000
    average_last: int = 3


@dataclass
class SentimentConfig(TrainConfig):
    """Training the `SentimentClassifier` on the prepared Rotten Tomatoes reviews."""

    out_dir: str = "runs/sentiment"
    data_dir: str = "data/processed/sentiment"  # train/valid/test.tsv with columns label, text
    vocab_size: int = 8000  # BPE vocabulary of the reviews (train split only)
    lowercase: bool = True  # reviews differ little by case; lowercasing halves the vocabulary needed
    d_model: int = 128  # model width
    n_heads: int = 4  # attention heads
    n_layers: int = 2  # encoder layers
    d_ff: int = 256  # feed-forward inner width
    dropout: float = 0.3  # strong: about 10k short training texts
    pre_norm: bool = False  # pre-LN instead of post-LN
    pooling: str = "mean"  # "mean" or "max" over real tokens
    max_len: int = 128  # tokens kept per review
    lr: float = 5e-4
    warmup_steps: int = 200
    batch_tokens: int = 4096
    max_epochs: int = 20
    eval_every: int = 0  # each epoch
    label_smoothing: float = 0.1
    patience: int = 5
    init_from: str = ""  # a translation model dir: start from its tokenizer, embeddings and first encoder layers


def batched(items: list[Any], size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


class TranslateTask:
    score_name = "valid_bleu"

    def __init__(self, cfg: TranslateConfig, tokenizer: Tokenizer | None = None, quiet: bool = False):
        self.cfg = cfg
        data = Path(cfg.data_dir)
        train = read_tsv(data / "train.tsv")
        if not cfg.use_phrases:
            train = [r for r in train if r.get("kind", "sentence") == "sentence"]
        self.valid = read_tsv(data / "valid.tsv")
        if tokenizer is None:
            tokenizer = train_tokenizer((r[c] for r in train for c in ("de", "en")), vocab_size=cfg.vocab_size)
        self.tokenizer = tokenizer
        self.directions = [tuple(d.split("-")) for d in cfg.directions.split(",")]
        self.meta = {"task": "translate", "directions": [list(d) for d in self.directions],
                     "max_src_len": cfg.max_src_len}
        self.batches = self.make_batches(train, cfg.batch_tokens, cfg.seed)
        self.valid_batches = self.make_batches(self.valid, cfg.batch_tokens, 0)
        if not quiet:
            print(f"translate: {len(train):,} train pairs × {len(self.directions)} directions, "
                  f"{len(self.batches):,} batches; vocab {tokenizer.vocab_size:,}", flush=True)

    def model_config(self) -> Seq2SeqConfig:
        c = self.cfg
        return Seq2SeqConfig(vocab_size=self.tokenizer.vocab_size, d_model=c.d_model, n_heads=c.n_heads,
                             n_layers=c.n_layers, n_decoder_layers=c.n_decoder_layers, d_ff=c.d_ff,
                             dropout=c.dropout, max_len=c.max_len, pre_norm=c.pre_norm,
                             pad_id=self.tokenizer.pad_id)

    def build_model(self) -> Seq2SeqTransformer:
        return Seq2SeqTransformer(self.model_config())

    def examples(self, rows: list[dict[str, str]]) -> list[tuple[list[int], list[int]]]:
        """(source ids with tag and </s>, target ids without specials) for every row and direction."""
        tok, out = self.tokenizer, []
        target_room = self.cfg.max_len - 1  # <s> + target or target + </s> must fit the positional table
        for src_lang, tgt_lang in self.directions:
            tag = tok.token_to_id(f"<2{tgt_lang}>")
            srcs = tok.encode_batch([r[src_lang] for r in rows])
            tgts = tok.encode_batch([r[tgt_lang] for r in rows])
            for s, t in zip(srcs, tgts, strict=True):
                out.append(([tag] + s[:self.cfg.max_src_len - 2] + [tok.eos_id], t[:target_room]))
        return out

    def make_batches(self, rows: list[dict[str, str]], max_tokens: int, seed: int) -> list[dict[str, torch.Tensor]]:
        examples = self.examples(rows)
        groups = token_batches([max(len(s), len(t) + 1) for s, t in examples], max_tokens, seed)
        tok = self.tokenizer
        batches = []
        for group in groups:
            src = pad_rows([examples[i][0] for i in group], tok.pad_id)
            tgt_in = pad_rows([[tok.bos_id] + examples[i][1] for i in group], tok.pad_id)
            tgt_out = pad_rows([examples[i][1] + [tok.eos_id] for i in group], tok.pad_id)
            batches.append({"src_ids": src, "tgt_ids": tgt_in, "labels": tgt_out})
        return batches

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
        logits = model(batch["src_ids"], batch["tgt_ids"])  # (B, T, V)
        labels = batch["labels"]
        loss = F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(), ignore_index=self.tokenizer.pad_id,
                               label_smoothing=self.cfg.label_smoothing, reduction="sum")
        return loss, int((labels != self.tokenizer.pad_id).sum())

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        model.eval()
        device = next(model.parameters()).device
        total, count = 0.0, 0
        for batch in self.valid_batches:
            batch = {k: v.to(device) for k, v in batch.items()}
            logits = model(batch["src_ids"], batch["tgt_ids"])
            labels = batch["labels"]
            total += F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(),
                                     ignore_index=self.tokenizer.pad_id, reduction="sum").item()
            count += int((labels != self.tokenizer.pad_id).sum())
        rows = self.valid[:self.cfg.eval_sentences]
        translator = Translator(model, self.tokenizer, self.meta)
        hyps = [t.text for t in translator.translate([r["de"] for r in rows], "de", "en", method="greedy")]
        bleu = sacrebleu.corpus_bleu(hyps, [[r["en"] for r in rows]]).score
        return {"valid_loss": total / max(count, 1), "valid_ppl": min(float(torch.tensor(total / max(count, 1)).exp()),
                                                                        1e9), "valid_bleu": bleu}

    def checkpoint_extra(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer.to_str(), "meta": self.meta}

    def save_model_dir(self, model: nn.Module, directory: Path) -> None:
        save_model_dir(directory, model, self.tokenizer.to_str(), self.meta)


class SentimentTask:
    score_name = "valid_accuracy"

    def __init__(self, cfg: SentimentConfig, tokenizer: Tokenizer | None = None, quiet: bool = False,
                 rows: tuple[list[dict[str, str]], list[dict[str, str]]] | None = None):
        """rows: (train, valid) given in memory (cross-validation folds) instead of read from data_dir."""
        self.cfg = cfg
        data = Path(cfg.data_dir)
        train, self.valid = rows or (read_tsv(data / "train.tsv"), read_tsv(data / "valid.tsv"))
        unknown = {r["label"] for r in train + self.valid} - set(LABELS)
        if unknown:
            raise ValueError(f"unknown labels {sorted(unknown)} in {cfg.data_dir}: expected {LABELS}")
        self.source = None
        if cfg.init_from:  # transfer: the translator's English-reading encoder (CoVe-style, McCann et al. 2017)
            self.source = load_model_dir(cfg.init_from, "seq2seq")
            tokenizer = Tokenizer.load(Path(cfg.init_from) / TOKENIZER_FILE)
        elif tokenizer is None:
            tokenizer = train_tokenizer((r["text"] for r in train), vocab_size=cfg.vocab_size,
                                        lowercase=cfg.lowercase)
        self.tokenizer = tokenizer
        self.meta = {"task": "sentiment", "labels": LABELS, "max_len": cfg.max_len}
        self.batches = self.make_batches(train, cfg.batch_tokens, cfg.seed)
        self.valid_batches = self.make_batches(self.valid, cfg.batch_tokens, 0)
        if not quiet:
            print(f"sentiment: {len(train):,} train reviews, {len(self.batches):,} batches; "
                  f"vocab {tokenizer.vocab_size:,}", flush=True)

    def model_config(self) -> ClassifierConfig:
        c = self.cfg
        shape = dict(d_model=c.d_model, n_heads=c.n_heads, n_layers=c.n_layers, d_ff=c.d_ff, pre_norm=c.pre_norm)
        if self.source is not None:  # the shape is the source encoder's; n_layers may keep only its first layers
            s = self.source.config
            shape = dict(d_model=s.d_model, n_heads=s.n_heads, n_layers=min(c.n_layers, s.n_layers), d_ff=s.d_ff,
                         pre_norm=s.pre_norm)
        return ClassifierConfig(vocab_size=self.tokenizer.vocab_size, dropout=c.dropout, max_len=c.max_len,
                                pooling=c.pooling, n_classes=len(LABELS), pad_id=self.tokenizer.pad_id, **shape)

    def build_model(self) -> SentimentClassifier:
        model = SentimentClassifier(self.model_config())
        if self.source is not None:
            model.embed.load_state_dict(self.source.src_embed.state_dict())
            for layer, source_layer in zip(model.encoder.layers, self.source.encoder.layers, strict=False):
                layer.load_state_dict(source_layer.state_dict())
        return model

    def make_batches(self, rows: list[dict[str, str]], max_tokens: int, seed: int) -> list[dict[str, torch.Tensor]]:
        ids = [x[:self.cfg.max_len] or [self.tokenizer.unk_id]
               for x in self.tokenizer.encode_batch([r["text"] for r in rows])]
        labels = [LABELS.index(r["label"]) for r in rows]
        groups = token_batches([len(x) for x in ids], max_tokens, seed, max_rows=256)
        return [{"input_ids": pad_rows([ids[i] for i in g], self.tokenizer.pad_id),
                 "labels": torch.tensor([labels[i] for i in g])} for g in groups]

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
        logits = model(batch["input_ids"], batch["input_ids"] != self.tokenizer.pad_id)
        loss = F.cross_entropy(logits.float(), batch["labels"], label_smoothing=self.cfg.label_smoothing,
                               reduction="sum")
        return loss, batch["labels"].numel()

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        model.eval()
        device = next(model.parameters()).device
        total, correct, count = 0.0, 0, 0
        for batch in self.valid_batches:
            ids, labels = batch["input_ids"].to(device), batch["labels"].to(device)
            logits = model(ids, ids != self.tokenizer.pad_id).float()
            total += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += int((logits.argmax(-1) == labels).sum())
            count += labels.numel()
        return {"valid_loss": total / max(count, 1), "valid_accuracy": 100.0 * correct / max(count, 1)}

    def checkpoint_extra(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer.to_str(), "meta": self.meta}

    def save_model_dir(self, model: nn.Module, directory: Path) -> None:
        save_model_dir(directory, model, self.tokenizer.to_str(), self.meta)


TASKS = {"translate": (TranslateConfig, TranslateTask), "sentiment": (SentimentConfig, SentimentTask)}
