"""A task-agnostic training loop (minGPT style): it knows optimisation, time, checkpoints and
processes, and nothing about translation or sentiment.

What a task gives it (see `tx.tasks`): `batches` (a fixed list of batches, each a dict of CPU
tensors), `loss(model, batch) -> (summed loss, count)`, `evaluate(model) -> metrics dict`,
`score_name` (the metric that picks the best checkpoint; higher is better), `checkpoint_extra()`
(what must travel with a checkpoint, e.g. the tokenizer) and `save_model_dir(model, directory)`.

Recipe (paper §5.3): Adam β=(0.9, 0.98), ε=1e-9; linear warm-up to `lr` then inverse-sqrt decay (with
lr = (d_model · warmup)^-0.5 that is the paper's formula exactly; tests/tx/test_recipe.py checks it).
Not from the paper: gradient clipping (`clip_grad`, a guard against the post-LN loss spikes of small
batches) and the optional decay floor (`min_lr_ratio`) and weight decay (AdamW), both off by default; and
`decay_method="linear_time"`, warm-up then a linear decay that ends at the wall-clock budget (`max_time`).

Exact resume: a checkpoint holds model, optimizer, scheduler, step, the position inside the epoch
and the RNG states, and batch order is a pure function of (seed, epoch), so N steps straight equal
N/2 steps + resume + N/2 steps. Several processes: `torchrun` sets WORLD_SIZE/RANK; the model is
wrapped in DistributedDataParallel (gloo on CPU, nccl on CUDA), a DistributedSampler deals batches
to ranks, and only rank 0 evaluates, logs and writes files (`tx.run_files`: metrics.csv, TensorBoard,
snapshots for averaging).

Run configs: a task's subclass of `TrainConfig` nests its model config (`model_field`), so each model-shape
field is declared once, in `tx.config`.
"""
from __future__ import annotations

import atexit
import logging
import math
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, Protocol

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DistributedSampler

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .run_files import METRICS_FILE, TensorBoard, append_metrics, averaged_weights, keep_snapshot

# in out_dir: the latest training state (resume from it), the best-scoring one, and the shipped form at the end
LAST, BEST, MODEL_DIR = "last.pt", "best.pt", "model"


@dataclass
class TrainConfig:
    """What every training run needs, whatever the task."""

    out_dir: str = "runs/default"  # checkpoints, metrics.csv, TensorBoard logs and the final model directory
    seed: int = 1234  # seeds initialisation, dropout and batch order
    lr: float = 1e-3  # peak learning rate, reached at the end of warm-up
    warmup_steps: int = 1000  # linear warm-up length; then the decay of `decay_method`
    # after warm-up: "inverse_sqrt" (paper §5.3, open-ended) or "linear_time" (linear to min_lr_ratio · lr exactly
    # when max_time runs out: a run that must end at a wall-clock budget, a GPU window, ends annealed)
    decay_method: str = "inverse_sqrt"
    min_lr_ratio: float = 0.0  # floor of the decay as a fraction of lr (0 = pure inverse-sqrt, or linear to 0)
    weight_decay: float = 0.0  # decoupled (AdamW) weight decay; 0 = the paper's plain Adam
    # Paper §5.4, ε_ls = 0.1. Deviation: PyTorch's label_smoothing spreads ε over every class, <pad> included
    # (ε/V each), where the Annotated Transformer gives <pad> none; with V = 10k the difference is 1e-5 per class.
    label_smoothing: float = 0.1
    clip_grad: float = 1.0  # max global gradient norm (0 = no clipping); not in the paper, see the module doc
    batch_tokens: int = 4096  # padded tokens per batch per process (rows × longest row)
    max_epochs: int = 100  # stop after this many passes over the training data
    max_steps: int = 0  # stop after this many optimizer steps (0 = no limit)
    max_time: float = 0.0  # stop after this many seconds of this run, with a checkpoint (0 = no limit)
    eval_every: int = 500  # evaluate (and checkpoint) every N steps; 0 = at the end of each epoch
    average_last: int = 0  # also try the average of the last N evaluated checkpoints (0/1 = off)
    patience: int = 0  # stop after N evaluations without a new best score (0 = never)
    amp: str = "auto"  # "bf16" autocast, "none", or "auto" (bf16 on CUDA, none on CPU)
    threads: int = 0  # torch intra-op threads on CPU (0 = PyTorch's default)
    log_every: int = 20  # progress-bar refresh period in steps

    def __post_init__(self) -> None:
        for f in fields(self):  # a nested config given as a dict (JSON, a checkpoint's asdict, --set): see model_field
            value = getattr(self, f.name)
            if f.metadata.get("nested") and isinstance(value, dict):
                setattr(self, f.name, f.default_factory(**value))


def model_field(config_cls: type, **run_defaults: Any) -> Any:
    """A run config's nested model config: `config_cls(**run_defaults)`, where run_defaults are this run's
    defaults that differ from the model class's. Given as a dict, its fields are laid over the same defaults, so
    a field the model derives in __post_init__ (tgt_vocab_size from vocab_size) follows the given values."""
    return field(default_factory=partial(config_cls, **run_defaults), metadata={"nested": True})


def read_last(out_dir: str | Path) -> dict[str, Any]:
    """out_dir/last.pt, read once when a run resumes. What each part takes from it: the settings (`train_config`),
    the task's extras (`tokenizer`), the model to rebuild (`kind`, `config`) and the training state
    (`Trainer(..., resume=it)`: weights, optimizer, scheduler, position, RNG, best score, wall time)."""
    return load_checkpoint(Path(out_dir) / LAST)


class Task(Protocol):
    batches: list[dict[str, torch.Tensor]]
    score_name: str

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]: ...
    def evaluate(self, model: nn.Module) -> dict[str, float]: ...
    def checkpoint_extra(self) -> dict[str, Any]: ...
    def save_model_dir(self, model: nn.Module, directory: Path) -> None: ...


def inverse_sqrt_schedule(warmup: int, min_ratio: float = 0.0):
    """lr multiplier at step s (0-based): linear to 1 over `warmup` steps, then sqrt(warmup / s)."""
    warmup = max(1, warmup)

    def factor(step: int) -> float:
        s = step + 1
        return max(min_ratio, min(s / warmup, math.sqrt(warmup / s)))

    return factor


def time_linear_schedule(warmup: int, spent: Callable[[], float], min_ratio: float = 0.0):
    """lr multiplier at step s (0-based): linear to 1 over `warmup` steps, and the lower of that and a line from 1
    down to `min_ratio` as `spent()`, the fraction of the wall-clock budget used, goes from 0 to 1 (clamped)."""
    warmup = max(1, warmup)

    def factor(step: int) -> float:
        left = 1.0 - min(1.0, max(0.0, spent()))
        return min((step + 1) / warmup, min_ratio + (1.0 - min_ratio) * left)

    return factor


DECAY_METHODS = ("inverse_sqrt", "linear_time")


def distributed() -> tuple[int, int]:
    """(rank, world size), starting the process group when launched by torchrun."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return (dist.get_rank(), world) if world > 1 else (0, 1)


def exit_worker(code: int) -> NoReturn:
    """End this process with `code` now: the atexit handlers, a flush, then `os._exit`, skipping the interpreter's
    teardown. A torchrun worker leaves this way once its run is complete (so do the test suite's xdist workers).

    A gloo worker thread may still hold the last reference to a finished collective whose tensors have Python
    objects (a core dump showed ~AsyncBarrierWork freeing the stop flag's broadcast). Freeing them takes the GIL;
    during interpreter shutdown that ends the thread inside a destructor, and C++ aborts ("terminate called without
    an active exception", SIGABRT): 4 runs in 120 of a 2-process run, after the model was written."""
    atexit._run_exitfuncs()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class Trainer:
    def __init__(self, config: TrainConfig, model: nn.Module, task: Task, resume: dict[str, Any] | None = None,
                 quiet: bool = False):
        """resume: the checkpoint to continue from (`read_last(config.out_dir)`); None starts at step 0."""
        self.config, self.task, self.quiet = config, task, quiet
        self.wall_before = 0.0  # training seconds spent by earlier runs of this checkpoint (restore sets it)
        self.rank, self.world = distributed()
        if torch.cuda.is_available():
            local = int(os.environ.get("LOCAL_RANK", "0"))
            torch.cuda.set_device(local)
            self.device = torch.device("cuda", local)
            torch.backends.cuda.matmul.allow_tf32 = True
        else:
            self.device = torch.device("cpu")
            if config.threads:
                torch.set_num_threads(config.threads)
        amp = config.amp if config.amp != "auto" else ("bf16" if self.device.type == "cuda" else "none")
        if amp not in ("bf16", "none"):
            raise ValueError(f"amp must be auto, bf16 or none, got {config.amp!r}")
        self.autocast = amp == "bf16"
        self.model = model.to(self.device)
        self.ddp = nn.parallel.DistributedDataParallel(self.model) if self.world > 1 else None
        adam = torch.optim.AdamW if config.weight_decay else torch.optim.Adam
        extra = {"weight_decay": config.weight_decay} if config.weight_decay else {}
        if self.device.type == "cuda":
            extra["fused"] = True  # one kernel for the whole update instead of several per parameter
        self.optimizer = adam(self.model.parameters(), lr=config.lr, betas=(0.9, 0.98), eps=1e-9, **extra)
        if config.decay_method not in DECAY_METHODS:
            raise ValueError(f"decay_method must be one of {', '.join(DECAY_METHODS)}, got {config.decay_method!r}")
        if config.decay_method == "linear_time" and config.max_time <= 0:
            raise ValueError("decay_method linear_time decays to the end of max_time: set max_time (seconds)")
        schedule = inverse_sqrt_schedule(config.warmup_steps, config.min_lr_ratio) \
            if config.decay_method == "inverse_sqrt" else \
            time_linear_schedule(config.warmup_steps, self.budget_spent, config.min_lr_ratio)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, schedule)
        self.out = Path(config.out_dir)
        self.step, self.epoch, self.batch_in_epoch = 0, 0, 0
        self.best_score, self.best_step, self.evals_since_best = -math.inf, -1, 0
        self.stop_requested = False
        self.tensorboard = TensorBoard(self.out)
        if resume is not None:
            self.restore(resume)

    # --- checkpoints ---------------------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        rng = {"torch": torch.get_rng_state()}
        if torch.cuda.is_available():
            rng["cuda"] = torch.cuda.get_rng_state()
        return dict(optimizer=self.optimizer.state_dict(), scheduler=self.scheduler.state_dict(), step=self.step,
                    epoch=self.epoch, batch_in_epoch=self.batch_in_epoch, rng=rng, best_score=self.best_score,
                    best_step=self.best_step, evals_since_best=self.evals_since_best,
                    wall_time=self.wall_before + self.elapsed(), train_config=asdict(self.config),
                    **self.task.checkpoint_extra())

    def save(self, name: str) -> None:
        if self.rank == 0:
            save_checkpoint(self.out / name, self.model, **self.state())

    def restore(self, ckpt: dict[str, Any]) -> None:
        """Continue from a checkpoint's training state (see `read_last`)."""
        try:
            self.model.load_state_dict(ckpt["model"])
            self.optimizer.load_state_dict(ckpt["optimizer"])
            self.scheduler.load_state_dict(ckpt["scheduler"])
        except (RuntimeError, ValueError, KeyError) as e:
            raise CheckpointError(f"{self.out / LAST}: cannot resume from it ({str(e)[:300]})") from e
        self.step, self.epoch, self.batch_in_epoch = ckpt["step"], ckpt["epoch"], ckpt["batch_in_epoch"]
        self.best_score, self.best_step = ckpt["best_score"], ckpt["best_step"]
        self.evals_since_best, self.wall_before = ckpt["evals_since_best"], ckpt["wall_time"]
        torch.set_rng_state(ckpt["rng"]["torch"])
        if "cuda" in ckpt["rng"] and torch.cuda.is_available():
            torch.cuda.set_rng_state(ckpt["rng"]["cuda"])

    # --- the loop ------------------------------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.started if hasattr(self, "started") else 0.0

    def budget_spent(self) -> float:
        """The fraction of the wall-clock budget used: all runs of this checkpoint over them plus this run's
        max_time, so a run resumed with the seconds that were left continues the same line to the same end."""
        total = self.wall_before + self.config.max_time
        return (self.wall_before + self.elapsed()) / total if total > 0 else 0.0

    def out_of_budget(self) -> bool:
        c = self.config
        over = (c.max_steps and self.step >= c.max_steps) or (c.max_time and self.elapsed() >= c.max_time) \
            or self.stop_requested or (c.patience and self.evals_since_best >= c.patience)
        if self.world > 1:  # every rank must stop at the same step
            flag = torch.tensor([1.0 if over else 0.0], device=self.device if dist.get_backend() == "nccl" else "cpu")
            dist.all_reduce(flag)
            over = flag.item() > 0
        return bool(over)

    def train_step(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
        """One optimizer step; returns the loss as a tensor (reading it would wait for the GPU every step)."""
        batch = {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.autocast):
            loss_sum, count = self.task.loss(self.ddp or self.model, batch)
        loss = loss_sum / max(count, 1)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.config.clip_grad:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip_grad)
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        return loss.detach(), int(sum(v.numel() for k, v in batch.items() if k.endswith("ids")))

    def fit(self) -> dict[str, Any]:
        """Train until a budget runs out; returns the best evaluation. Ctrl-C saves `last.pt` first."""
        c = self.config
        self.started = time.monotonic()
        self.out.mkdir(parents=True, exist_ok=True)
        previous = signal.signal(signal.SIGINT, self._request_stop) if self.rank == 0 else None
        sampler = DistributedSampler(range(len(self.task.batches)), num_replicas=self.world, rank=self.rank,
                                     shuffle=True, seed=c.seed, drop_last=self.world > 1)
        progress = self._progress()
        losses: list[torch.Tensor] = []
        tokens, tick = 0, time.monotonic()
        try:
            while self.epoch < c.max_epochs and not self.out_of_budget():
                sampler.set_epoch(self.epoch)
                order = list(sampler)
                for index in order[self.batch_in_epoch:]:
                    loss, n = self.train_step(self.task.batches[index])
                    self.batch_in_epoch += 1
                    losses.append(loss)
                    tokens += n
                    if progress is not None and self.step % c.log_every == 0:
                        rate = tokens * self.world / max(time.monotonic() - tick, 1e-9)
                        progress.set_postfix(loss=f"{loss.item():.3f}", lr=f"{self.scheduler.get_last_lr()[0]:.2e}",
                                             tok_s=f"{rate:,.0f}", epoch=self.epoch, refresh=False)
                        progress.update(c.log_every)
                    if c.eval_every and self.step % c.eval_every == 0:
                        self._evaluate_and_save(losses, tokens, tick)
                        losses, tokens, tick = [], 0, time.monotonic()
                    if self.out_of_budget():
                        break
                else:
                    self.epoch += 1
                    self.batch_in_epoch = 0
                    if not c.eval_every:
                        self._evaluate_and_save(losses, tokens, tick)
                        losses, tokens, tick = [], 0, time.monotonic()
            if losses:  # the partial stretch since the last evaluation
                self._evaluate_and_save(losses, tokens, tick)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
            if progress is not None:
                progress.close()
        result = self.finish()
        if self.world > 1:
            # Every rank waits for rank 0's model directory, then tears the group down: a rank that exits with the
            # gloo group still alive aborts in C++ ("terminate called without an active exception").
            dist.barrier()
            dist.destroy_process_group()
        return result

    def _request_stop(self, *_: Any) -> None:
        if self.stop_requested:  # a second Ctrl-C: give up at once
            raise KeyboardInterrupt
        self.stop_requested = True
        print("\nstopping after this step (Ctrl-C again to abort without saving)...", flush=True)

    def _progress(self):
        if self.rank != 0 or self.quiet:
            return None
        from tqdm import tqdm

        return tqdm(total=self.config.max_steps or None, initial=self.step, unit="step", dynamic_ncols=True)

    def _evaluate_and_save(self, losses: list[torch.Tensor], tokens: int, tick: float) -> None:
        rate = tokens * self.world / max(time.monotonic() - tick, 1e-9)
        if self.rank == 0:
            metrics = self.task.evaluate(self.model)
            self.model.train()
            row = {"step": self.step, "epoch": round(self.epoch + self._epoch_fraction(), 3),
                   "train_loss": round(torch.stack(losses).mean().item(), 4) if losses else float("nan"),
                   "lr": f"{self.scheduler.get_last_lr()[0]:.3e}", "tokens_per_s": round(rate),
                   "wall_time": round(self.wall_before + self.elapsed(), 1),
                   **{k: round(v, 4) for k, v in metrics.items()}}
            append_metrics(self.out, row)
            self.tensorboard.log(row, self.step)
            score = metrics[self.task.score_name]
            improved = score > self.best_score
            if improved:
                self.best_score, self.best_step, self.evals_since_best = score, self.step, 0
            else:
                self.evals_since_best += 1
            self.save(LAST)
            if improved:
                shutil.copyfile(self.out / LAST, self.out / BEST)
            if self.config.average_last > 1:  # weights of the last evaluations, for averaging at the end
                keep_snapshot(self.out, self.model, self.step, self.config.average_last)
            if not self.quiet:
                shown = ", ".join(f"{k} {v}" for k, v in row.items() if k not in ("lr",))
                print(f"\n[eval] {shown}{'  (best)' if improved else ''}", flush=True)
        if self.world > 1:
            flag = torch.tensor([float(self.evals_since_best)])
            dist.broadcast(flag.to(self.device) if dist.get_backend() == "nccl" else flag, 0)
            self.evals_since_best = int(flag.item())

    def _epoch_fraction(self) -> float:
        per_epoch = max(1, len(self.task.batches) // self.world)
        return min(self.batch_in_epoch / per_epoch, 1.0)

    # --- the end -------------------------------------------------------------------------------------------------
    def finish(self) -> dict[str, Any]:
        """Write `out_dir/model/` from the best weights (or their average, when that scores higher)."""
        result: dict[str, Any] = {"step": self.step, "best_step": self.best_step, self.task.score_name: self.best_score}
        if self.rank != 0:
            return result
        best_path = self.out / BEST
        if not best_path.is_file():
            return result
        self.model.load_state_dict(load_checkpoint(best_path)["model"])
        chosen = "best"
        averaged = averaged_weights(self.out, self.model.state_dict()) if self.config.average_last > 1 else None
        if averaged is not None:
            best_state = {k: v.clone() for k, v in self.model.state_dict().items()}
            self.model.load_state_dict(averaged)
            score = self.task.evaluate(self.model)[self.task.score_name]
            result[f"average_last_{self.config.average_last}"] = score
            if score > self.best_score:
                chosen = f"average of last {self.config.average_last}"
                result[self.task.score_name] = score
            else:
                self.model.load_state_dict(best_state)
        result["chosen"] = chosen
        self.model.eval()
        self.task.save_model_dir(self.model, self.out / MODEL_DIR)
        if (self.out / METRICS_FILE).is_file():
            shutil.copyfile(self.out / METRICS_FILE, self.out / MODEL_DIR / METRICS_FILE)
        return result
