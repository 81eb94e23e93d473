"""The two training tasks: what the generic `Trainer` is told about data, loss and evaluation.

Translation is one bidirectional model: every pair trains both DE→EN and EN→DE, the source
starting with the target-language tag `<2en>`/`<2de>` (as in multilingual NMT). Why one model:
the joint vocabulary and shared embeddings already tie the languages, two directions double
the training signal for the shared encoder/decoder, and the app ships one set of weights
(half the size budget of two models).
"""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sacrebleu
import torch
import torch.nn.functional as F
from torch import nn

from ..batching import pad, token_batches
from ..checkpoint import TOKENIZER_FILE, load_model_dir, read_model_config, save_model_dir
from ..config import ClassifierConfig, MaskedLMConfig, Seq2SeqConfig
from ..data import read_tsv
from ..data.translate import read_everyday
from ..inference import Translator
from ..model import MaskedLanguageModel, SentimentClassifier, Seq2SeqTransformer
from ..tokenizer import MASK, Tokenizer, train_tokenizer
from ..trainer import TrainConfig

LABELS = ["negative", "positive"]


@dataclass
class TranslateConfig(TrainConfig):
    """Training a bidirectional DE↔EN `Seq2SeqTransformer` on the prepared Ding pairs."""

    out_dir: str = "runs/translate"
    data_dir: str = "data/processed/translate"  # train/valid/test.tsv with columns de, en, kind, source
    use_phrases: bool = True  # also train on the phrase and word pairs (not only whole sentences)
    # Sampling weight per source or source.kind, "ding=1,ding.word=0.1,catalogs=0.3": a row is used
    # floor(w) times plus once more with probability frac(w) (drawn once, seeded); unlisted sources weigh 1.
    # Why: 600k one-word dictionary pairs or manual prose must not drown the everyday sentences.
    mix: str = ""
    init_from: str = ""  # a translation model dir: continue from its tokenizer and weights (fine-tuning)
    select_by: str = "valid_bleu"  # metric that picks the best checkpoint: valid_bleu, everyday_bleu, mean_bleu
    eval_docs: int = 200  # docs_valid DE→EN sentences translated greedily at each evaluation (0 = skip)
    eval_everyday: bool = True  # also score the hand-written everyday dev set (tx/evalsets/everyday.tsv)
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
    # A model dir to start from: a pretrained masked LM (`tx.train pretrain`) or a translator; the classifier
    # takes its tokenizer, embeddings and (first n_layers) encoder layers, and its shape.
    init_from: str = ""


@dataclass
class PretrainConfig(TrainConfig):
    """Masked-language-model pretraining of the classifier's encoder on unlabelled English (BERT's recipe)."""

    out_dir: str = "runs/pretrain"
    data_dir: str = "data/processed/pretrain"  # train/valid.tsv with columns text, source (`tx.data prepare`)
    mix: str = "rt_reviews=4,rt_plots=4"  # sampling weight per source, as TranslateConfig.mix: reviews count most
    vocab_size: int = 16000  # BPE vocabulary of the pretraining text (train split only), plus <mask>
    lowercase: bool = True  # as the classifier's tokenizer
    mask_prob: float = 0.15  # share of real tokens the loss is computed on (BERT: 15%)
    # Of those: 80% are replaced by <mask>, 10% by a random token, 10% kept, so the encoder cannot
    # learn that only <mask> positions matter (the fine-tuned classifier never sees <mask>).
    d_model: int = 128  # model width
    n_heads: int = 4  # attention heads
    n_layers: int = 4  # encoder layers
    d_ff: int = 512  # feed-forward inner width
    dropout: float = 0.1  # dropout everywhere
    pre_norm: bool = False  # post-LN, as the classifier
    max_len: int = 128  # tokens per text (as the classifier's limit)
    eval_texts: int = 2000  # valid texts whose masked tokens are scored at each evaluation
    lr: float = 1e-3
    warmup_steps: int = 1000
    batch_tokens: int = 8192
    max_epochs: int = 40
    eval_every: int = 1000
    label_smoothing: float = 0.0  # the loss is a language-model loss: no smoothing


def parse_mix(text: str) -> dict[str, float]:
    """"ding=1,ding.word=0.1" -> {"ding": 1.0, "ding.word": 0.1}; a clear error for anything else."""
    out: dict[str, float] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, sep, value = item.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = -1.0
        if not sep or not key or weight < 0:
            raise ValueError(f"mix: expected source=weight or source.kind=weight with weight >= 0, got {item!r}")
        out[key.strip()] = weight
    return out


def mix_rows(rows: list[dict[str, str]], mix: dict[str, float], seed: int) -> list[dict[str, str]]:
    """Rows repeated or subsampled by their source (or source.kind) weight; deterministic for a seed."""
    if not mix:
        return rows
    rng = random.Random(seed)
    out = []
    for r in rows:
        source = r.get("source", "")
        w = mix.get(f"{source}.{r.get('kind', '')}", mix.get(source, 1.0))
        copies = int(w) + (rng.random() < w - int(w))
        out.extend([r] * copies)
    return out


def padded(rows: list[list[int]], pad_id: int) -> torch.Tensor:
    return torch.from_numpy(pad(rows, pad_id)[0])  # (B, S) int64


class TranslateTask:
    def __init__(self, cfg: TranslateConfig, tokenizer: Tokenizer | None = None, quiet: bool = False):
        self.cfg = cfg
        if cfg.select_by not in ("valid_bleu", "everyday_bleu", "mean_bleu"):
            raise ValueError(f"select_by must be valid_bleu, everyday_bleu or mean_bleu, got {cfg.select_by!r}")
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
        if self.source is not None:  # the shape is the source model's; only dropout follows this run
            return dataclasses.replace(self.source.config, dropout=c.dropout)
        return Seq2SeqConfig(vocab_size=self.tokenizer.vocab_size, d_model=c.d_model, n_heads=c.n_heads,
                             n_layers=c.n_layers, n_decoder_layers=c.n_decoder_layers, d_ff=c.d_ff,
                             dropout=c.dropout, max_len=c.max_len, pre_norm=c.pre_norm,
                             pad_id=self.tokenizer.pad_id)

    def build_model(self) -> Seq2SeqTransformer:
        model = Seq2SeqTransformer(self.model_config())
        if self.source is not None:
            model.load_state_dict(self.source.state_dict())
        return model

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
            src = padded([examples[i][0] for i in group], tok.pad_id)
            tgt_in = padded([[tok.bos_id] + examples[i][1] for i in group], tok.pad_id)
            tgt_out = padded([examples[i][1] + [tok.eos_id] for i in group], tok.pad_id)
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
        translator = Translator(model, self.tokenizer, self.meta)

        def bleu(rows: list[dict[str, str]]) -> float:
            hyps = [t.text for t in translator.translate([r["de"] for r in rows], "de", "en", method="greedy")]
            return sacrebleu.corpus_bleu(hyps, [[r["en"] for r in rows]]).score

        metrics = {"valid_loss": total / max(count, 1),
                   "valid_ppl": min(float(torch.tensor(total / max(count, 1)).exp()), 1e9),
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
        if cfg.init_from:  # transfer: a pretrained masked LM, or the translator's encoder (CoVe, McCann et al. 2017)
            kind = read_model_config(cfg.init_from)["kind"]
            if kind not in ("mlm", "seq2seq"):
                raise ValueError(f"init_from={cfg.init_from}: holds a {kind} model; expected a pretrained masked LM "
                                 "(tx.train pretrain) or a translator")
            self.source = load_model_dir(cfg.init_from, kind)
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
            embed = self.source.embed if isinstance(self.source, MaskedLanguageModel) else self.source.src_embed
            model.embed.load_state_dict(embed.state_dict())
            for layer, source_layer in zip(model.encoder.layers, self.source.encoder.layers, strict=False):
                layer.load_state_dict(source_layer.state_dict())
        return model

    def make_batches(self, rows: list[dict[str, str]], max_tokens: int, seed: int) -> list[dict[str, torch.Tensor]]:
        ids = [x[:self.cfg.max_len] or [self.tokenizer.unk_id]
               for x in self.tokenizer.encode_batch([r["text"] for r in rows])]
        labels = [LABELS.index(r["label"]) for r in rows]
        groups = token_batches([len(x) for x in ids], max_tokens, seed, max_rows=256)
        return [{"input_ids": padded([ids[i] for i in g], self.tokenizer.pad_id),
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
        """The shipped form, with the temperature fitted on the valid split (labels unchanged)."""
        from ..calibration import fit_classifier

        fit_classifier(model, self.tokenizer, self.meta, self.valid)
        save_model_dir(directory, model, self.tokenizer.to_str(), self.meta)


class PretrainTask:
    """Masked-language-model pretraining: the loss is cross-entropy at the masked positions only."""

    score_name = "valid_mlm_accuracy"

    def __init__(self, cfg: PretrainConfig, tokenizer: Tokenizer | None = None, quiet: bool = False):
        self.cfg = cfg
        if not 0 < cfg.mask_prob < 1:
            raise ValueError(f"mask_prob must be in (0, 1), got {cfg.mask_prob}")
        data = Path(cfg.data_dir)
        train = mix_rows(read_tsv(data / "train.tsv"), parse_mix(cfg.mix), cfg.seed)
        valid = read_tsv(data / "valid.tsv")[:cfg.eval_texts]
        if tokenizer is None:
            tokenizer = train_tokenizer((r["text"] for r in train), vocab_size=cfg.vocab_size,
                                        lowercase=cfg.lowercase, extra_specials=[MASK])
        self.tokenizer = tokenizer
        mask_id = tokenizer.token_to_id(MASK)
        if mask_id is None:
            raise ValueError(f"the tokenizer has no {MASK} token")
        self.mask_id = mask_id
        self.first_normal_id = mask_id + 1  # random replacements are drawn from real pieces, never specials
        self.meta = {"task": "pretrain", "mask_prob": cfg.mask_prob, "max_len": cfg.max_len}
        self.batches = self.make_batches(train, cfg.batch_tokens, cfg.seed)
        self.valid_batches = self.make_batches(valid, cfg.batch_tokens, 0)
        if not quiet:
            print(f"pretrain: {len(train):,} texts (after mix), {len(self.batches):,} batches; "
                  f"vocab {tokenizer.vocab_size:,}", flush=True)

    def model_config(self) -> MaskedLMConfig:
        c = self.cfg
        return MaskedLMConfig(vocab_size=self.tokenizer.vocab_size, d_model=c.d_model, n_heads=c.n_heads,
                              n_layers=c.n_layers, d_ff=c.d_ff, dropout=c.dropout, max_len=c.max_len,
                              pre_norm=c.pre_norm, pad_id=self.tokenizer.pad_id)

    def build_model(self) -> MaskedLanguageModel:
        return MaskedLanguageModel(self.model_config())

    def make_batches(self, rows: list[dict[str, str]], max_tokens: int, seed: int) -> list[dict[str, torch.Tensor]]:
        ids = [x[:self.cfg.max_len] for x in self.tokenizer.encode_batch([r["text"] for r in rows])]
        ids = [x for x in ids if len(x) >= 2]  # one piece leaves nothing to predict it from
        groups = token_batches([len(x) for x in ids], max_tokens, seed, max_rows=512)
        return [{"input_ids": padded([ids[i] for i in g], self.tokenizer.pad_id)} for g in groups]

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

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
        ids = batch["input_ids"]
        corrupted, selected = self.mask(ids)
        logits = model(corrupted, selected)  # (N, V) at the selected positions only
        loss = F.cross_entropy(logits.float(), ids[selected], label_smoothing=self.cfg.label_smoothing,
                               reduction="sum")
        return loss, int(selected.sum())

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        """Loss and accuracy at masked positions of the valid texts; the same masks at every evaluation."""
        model.eval()
        device = next(model.parameters()).device
        generator = torch.Generator(device=device).manual_seed(0)
        total, correct, count = 0.0, 0, 0
        for batch in self.valid_batches:
            ids = batch["input_ids"].to(device)
            corrupted, selected = self.mask(ids, generator)
            logits = model(corrupted, selected).float()
            target = ids[selected]
            total += F.cross_entropy(logits, target, reduction="sum").item()
            correct += int((logits.argmax(-1) == target).sum())
            count += target.numel()
        loss = total / max(count, 1)
        return {"valid_mlm_loss": loss, "valid_mlm_ppl": min(float(torch.tensor(loss).exp()), 1e9),
                "valid_mlm_accuracy": 100.0 * correct / max(count, 1)}

    def checkpoint_extra(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer.to_str(), "meta": self.meta}

    def save_model_dir(self, model: nn.Module, directory: Path) -> None:
        save_model_dir(directory, model, self.tokenizer.to_str(), self.meta)


TASKS = {"translate": (TranslateConfig, TranslateTask), "sentiment": (SentimentConfig, SentimentTask),
         "pretrain": (PretrainConfig, PretrainTask)}
