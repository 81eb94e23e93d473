"""Sentiment: the `SentimentClassifier` on the prepared Rotten Tomatoes reviews, optionally started from a
pretrained masked LM or the translator's encoder; shipped with its temperature fitted on valid."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from runtime.tsv import LABELS, read_tsv

from ..calibration import fit_classifier
from ..checkpoint import TOKENIZER_FILE, load_model_dir, read_model_config
from ..config import ClassifierConfig
from ..model import MaskedLanguageModel, SentimentClassifier
from ..tokenizer import Tokenizer, train_tokenizer
from ..trainer import TrainConfig, model_field
from .base import Batch, Rows, TextTask


@dataclass
class SentimentConfig(TrainConfig):
    """Training the `SentimentClassifier` on the prepared Rotten Tomatoes reviews."""

    out_dir: str = "runs/sentiment"
    data_dir: str = "data/processed/sentiment"  # train/valid/test.tsv with columns label, text
    lowercase: bool = True  # reviews differ little by case; lowercasing halves the vocabulary needed
    lr: float = 5e-4
    warmup_steps: int = 200
    batch_tokens: int = 4096
    max_epochs: int = 20
    eval_every: int = 0  # each epoch
    label_smoothing: float = 0.1
    patience: int = 5
    # A model dir to start from: a pretrained masked LM (`python -m tx train pretrain`) or a translator; the
    # classifier takes its tokenizer, embeddings and (first model.n_layers) encoder layers, and its shape.
    init_from: str = ""
    # The model (tx.config.ClassifierConfig's defaults but for these): small, with strong dropout, since there are
    # about 10k short training texts; max_len: tokens kept per review. vocab_size: the reviews' BPE vocabulary
    # (train split only); the model gets the trained tokenizer's size and pad id, and one class per label.
    model: ClassifierConfig = model_field(ClassifierConfig, d_model=128, n_layers=2, d_ff=256, dropout=0.3, max_len=128)


class SentimentTask(TextTask):
    name = "sentiment"
    score_name = "valid_accuracy"

    def __init__(self, cfg: SentimentConfig, tokenizer: Tokenizer | None = None, quiet: bool = False,
                 rows: tuple[Rows, Rows] | None = None):
        """rows: (train, valid) given in memory (cross-validation folds) instead of read from data_dir."""
        self.cfg = cfg
        data = Path(cfg.data_dir)
        train, self.valid = rows or (read_tsv(data / "train.tsv"), read_tsv(data / "valid.tsv"))
        unknown = {r["label"] for r in train + self.valid} - set(LABELS)
        if unknown:
            raise ValueError(f"unknown labels {sorted(unknown)} in {cfg.data_dir}: expected {list(LABELS)}")
        self.source = None
        if cfg.init_from:  # transfer: a pretrained masked LM, or the translator's encoder (CoVe, McCann et al. 2017)
            kind = read_model_config(cfg.init_from)["kind"]
            if kind not in ("mlm", "seq2seq"):
                raise ValueError(f"init_from={cfg.init_from}: holds a {kind} model; expected a pretrained masked LM "
                                 "(python -m tx train pretrain) or a translator")
            self.source = load_model_dir(cfg.init_from, kind)
            tokenizer = Tokenizer.load(Path(cfg.init_from) / TOKENIZER_FILE)
        elif tokenizer is None:
            tokenizer = train_tokenizer((r["text"] for r in train), vocab_size=cfg.model.vocab_size,
                                        lowercase=cfg.lowercase)
        meta = {"labels": list(LABELS), "max_len": cfg.model.max_len}
        self.setup(tokenizer, meta, train, self.valid, f"{len(train):,} train reviews", quiet)

    def model_config(self) -> ClassifierConfig:
        shape = {}
        if self.source is not None:  # the shape is the source encoder's; n_layers may keep only its first layers
            s = self.source.config
            shape = dict(d_model=s.d_model, n_heads=s.n_heads, n_layers=min(self.cfg.model.n_layers, s.n_layers),
                         d_ff=s.d_ff, pre_norm=s.pre_norm)
        return super().model_config(n_classes=len(LABELS), **shape)

    def build_model(self) -> SentimentClassifier:
        model = SentimentClassifier(self.model_config())
        if self.source is not None:
            embed = self.source.embed if isinstance(self.source, MaskedLanguageModel) else self.source.src_embed
            model.embed.load_state_dict(embed.state_dict())
            for layer, source_layer in zip(model.encoder.layers, self.source.encoder.layers, strict=False):
                layer.load_state_dict(source_layer.state_dict())
        return model

    def make_batches(self, rows: Rows, max_tokens: int, seed: int) -> list[Batch]:
        ids = [x[:self.cfg.model.max_len] or [self.tokenizer.unk_id]
               for x in self.tokenizer.encode_batch([r["text"] for r in rows])]
        return self.id_batches(ids, max_tokens, seed, 256, labels=[LABELS.index(r["label"]) for r in rows])

    def loss(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, int]:
        logits = model(batch["input_ids"], batch["input_ids"] != self.tokenizer.pad_id)
        loss = F.cross_entropy(logits.float(), batch["labels"], label_smoothing=self.cfg.label_smoothing,
                               reduction="sum")
        return loss, batch["labels"].numel()

    def reviews(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return model(batch["input_ids"], batch["input_ids"] != self.tokenizer.pad_id), batch["labels"]

    def evaluate(self, model: nn.Module) -> dict[str, float]:
        total, correct, count = self.valid_pass(model, self.reviews)
        return {"valid_loss": total / max(count, 1), "valid_accuracy": 100.0 * correct / max(count, 1)}

    def save_model_dir(self, model: nn.Module, directory: Path) -> None:
        """The shipped form, with the temperature fitted on the valid split (labels unchanged)."""
        fit_classifier(model, self.tokenizer, self.meta, self.valid)
        super().save_model_dir(model, directory)
