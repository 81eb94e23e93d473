"""Masked-language-model pretraining of the classifier's encoder on unlabelled English (BERT's recipe): the loss
is cross-entropy at the masked positions only."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from runtime.tsv import read_tsv

from ..config import MaskedLMConfig
from ..model import MaskedLanguageModel
from ..tokenizer import MASK, Tokenizer, train_tokenizer
from ..trainer import TrainConfig, model_field
from .base import Batch, Rows, TextTask, perplexity
from .mix import mix_rows, parse_mix


@dataclass
class PretrainConfig(TrainConfig):
    """Masked-language-model pretraining of the classifier's encoder on unlabelled English (BERT's recipe)."""

    out_dir: str = "runs/pretrain"
    data_dir: str = "data/processed/pretrain"  # train/valid.tsv with columns text, source (`corpus prepare`)
    mix: str = "rt_reviews=4,rt_plots=4"  # sampling weight per source, as TranslateConfig.mix: reviews count most
    lowercase: bool = True  # as the classifier's tokenizer
    mask_prob: float = 0.15  # share of real tokens the loss is computed on (BERT: 15%)
    # Of those: 80% are replaced by <mask>, 10% by a random token, 10% kept, so the encoder cannot
    # learn that only <mask> positions matter (the fine-tuned classifier never sees <mask>).
    eval_texts: int = 2000  # valid texts whose masked tokens are scored at each evaluation
    lr: float = 1e-3
    warmup_steps: int = 1000
    batch_tokens: int = 8192
    max_epochs: int = 40
    eval_every: int = 1000
    label_smoothing: float = 0.0  # the loss is a language-model loss: no smoothing
    # The encoder (tx.config.MaskedLMConfig's defaults but for these), post-LN and max_len as the classifier's.
    # vocab_size: the BPE vocabulary of the pretraining text (train split only), plus <mask>.
    model: MaskedLMConfig = model_field(MaskedLMConfig, vocab_size=16000, d_model=128, n_layers=4, d_ff=512,
                                        max_len=128)


class PretrainTask(TextTask):
    name = "pretrain"
    score_name = "valid_mlm_accuracy"

    def __init__(self, cfg: PretrainConfig, tokenizer: Tokenizer | None = None, quiet: bool = False):
        self.cfg = cfg
        if not 0 < cfg.mask_prob < 1:
            raise ValueError(f"mask_prob must be in (0, 1), got {cfg.mask_prob}")
        data = Path(cfg.data_dir)
        train = mix_rows(read_tsv(data / "train.tsv"), parse_mix(cfg.mix), cfg.seed)
        valid = read_tsv(data / "valid.tsv")[:cfg.eval_texts]
        if tokenizer is None:
            tokenizer = train_tokenizer((r["text"] for r in train), vocab_size=cfg.model.vocab_size,
                                        lowercase=cfg.lowercase, extra_specials=[MASK])
        mask_id = tokenizer.token_to_id(MASK)
        if mask_id is None:
            raise ValueError(f"the tokenizer has no {MASK} token")
        self.mask_id = mask_id
        self.first_normal_id = mask_id + 1  # random replacements are drawn from real pieces, never specials
        meta = {"mask_prob": cfg.mask_prob, "max_len": cfg.model.max_len}
        self.setup(tokenizer, meta, train, valid, f"{len(train):,} texts (after mix)", quiet)

    def build_model(self) -> MaskedLanguageModel:
        return MaskedLanguageModel(self.model_config())

    def make_batches(self, rows: Rows, max_tokens: int, seed: int) -> list[Batch]:
        ids = [x[:self.cfg.model.max_len] for x in self.tokenizer.encode_batch([r["text"] for r in rows])]
        ids = [x for x in ids if len(x) >= 2]  # one piece leaves nothing to predict it from
        return self.id_batches(ids, max_tokens, seed, 512)

    def mask(self, ids: torch.Tensor, generator: torch.Generator | None = None
             ) -> tuple[torch.Tensor, torch.Tensor]:
        """(corrupted ids, selected (B, S) bool): mask_prob of the real tokens selected (at least one per row),
        then 80% of those -> <mask>, 10% -> a random piece, 10% unchanged."""
        real = ids != self.tokenizer.pad_id
        draw = torch.rand(ids.shape, generator=generator, device=ids.device)
        selected = (draw < self.cfg.mask_prob) & real
        # a row with nothing selected would add nothing to the loss: select its lowest-draw real token
        first = draw.masked_fill(~real, 2.0).argmin(dim=1)  # (B,)
        empty = ~selected.any(dim=1)
        selected[empty, first[empty]] = True
        how = torch.rand(ids.shape, generator=generator, device=ids.device)
        random_ids = torch.randint(self.first_normal_id, self.tokenizer.vocab_size, ids.shape, generator=generator,
                                   device=ids.device)
        corrupted = torch.where(selected & (how < 0.8), torch.full_like(ids, self.mask_id), ids)
        corrupted = torch.where(selected & (how >= 0.8) & (how < 0.9), random_ids, corrupted)
        return corrupted, selected

    def loss(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, int]:
        ids = batch["input_ids"]
        corrupted, selected = self.mask(ids)
        logits = model(corrupted, selected)  # (N, V) at the selected positions only
        loss = F.cross_entropy(logits.float(), ids[selected], label_smoothing=self.cfg.label_smoothing,
                               reduction="sum")
        return loss, int(selected.sum())

    def evaluate(self, model: nn.Module) -> dict[str, float]:
        """Loss and accuracy at masked positions of the valid texts; the same masks at every evaluation."""
        generator = torch.Generator(device=next(model.parameters()).device).manual_seed(0)

        def masked(model: nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
            corrupted, selected = self.mask(batch["input_ids"], generator)
            return model(corrupted, selected), batch["input_ids"][selected]

        total, correct, count = self.valid_pass(model, masked)
        loss = total / max(count, 1)
        return {"valid_mlm_loss": loss, "valid_mlm_ppl": perplexity(loss),
                "valid_mlm_accuracy": 100.0 * correct / max(count, 1)}
