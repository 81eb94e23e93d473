"""One planned run trained on a packed corpus, fresh or resumed: what a detached worker process does.

It writes into the run's out_dir what `tx.trainer.Trainer` writes (last.pt, best.pt, snapshots/, metrics.csv and,
at the end, model/ from the best or averaged weights), and then result.json (the Trainer's result: steps, the
selection score, which weights were chosen). A failure leaves error.json instead, so the job never waits on a run
that is gone.
"""
from __future__ import annotations

import json
import traceback
from pathlib import Path
from typing import Any

import torch

from runtime.files import atomic_write
from tx.checkpoint import build_model
from tx.tasks.translate import TranslateConfig
from tx.tokenizer import Tokenizer
from tx.trainer import LAST, Trainer

from .packed_task import PackedTranslateTask

RESULT, ERROR = "result.json", "error.json"


def write_json(path: Path, value: Any) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(json.dumps(value, indent=2) + "\n"))


def build_packed_run(config: TranslateConfig, last: dict[str, Any] | None = None, quiet: bool = False):
    """(task, model): fresh, seeded as `python -m tx train` seeds, or rebuilt from last.pt when resuming."""
    if last is not None:
        task = PackedTranslateTask(config, tokenizer=Tokenizer.from_str(last["tokenizer"]), quiet=quiet)
        return task, build_model(last["kind"], last["config"], source=str(Path(config.out_dir) / LAST))
    torch.manual_seed(config.seed)
    task = PackedTranslateTask(config, quiet=quiet)
    torch.manual_seed(config.seed)  # the same initial weights as `python -m tx train` would draw
    return task, task.build_model()


def train_packed(config: TranslateConfig, last: dict[str, Any] | None = None, quiet: bool = False) -> dict[str, Any]:
    """Train until the run's budget ends; result.json (or error.json) in out_dir says how it ended."""
    out = Path(config.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in (RESULT, ERROR):  # a resumed run's earlier ending is no longer its ending
        (out / stale).unlink(missing_ok=True)
    try:
        task, model = build_packed_run(config, last, quiet)
        trainer = Trainer(config, model, task, resume=last, quiet=quiet)
        print(f"{out.name}: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters on {trainer.device}",
              flush=True)
        result = trainer.fit()
    except BaseException as e:  # noqa: BLE001 (also KeyboardInterrupt/SIGTERM: the job must learn the run ended)
        write_json(out / ERROR, {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]})
        raise
    result = {**result, "score_name": task.score_name, "score": result[task.score_name], "device": str(trainer.device)}
    write_json(out / RESULT, result)
    return result
