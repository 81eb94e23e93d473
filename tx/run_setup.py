"""A training run from its settings: `make_config` (the task's defaults, a JSON file, `--set` overrides, and on
resume the run's own last.pt) and `build_run` (its task and model, fresh or rebuilt from last.pt). What
`python -m tx train` and the GPU job (gpujob) both start a run with."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .checkpoint import build_model
from .settings import command_line, flatten, nest
from .tasks import TASKS
from .tokenizer import Tokenizer
from .trainer import LAST, TrainConfig, read_last


def make_config(task_name: str, config_file: Path | None, overrides: list[str], resume: bool = False
                ) -> tuple[TrainConfig, dict[str, Any] | None]:
    """The run's settings, and out_dir/last.pt when resuming (read once here; build_run and the Trainer take
    the rest of it): the run's own settings, then what this command line changes (e.g. a longer max_time)."""
    config_cls, _ = TASKS[task_name]
    values = command_line(config_cls, config_file, overrides)
    out_dir = values.get("out_dir", config_cls.out_dir)
    last = read_last(out_dir) if resume else None
    if last is not None:
        values = {**flatten(last["train_config"]), **values}
    try:
        return config_cls(**nest(values)), last
    except TypeError as e:  # only a checkpoint's settings can hold names the command line would have refused
        raise ValueError(f"{Path(out_dir) / LAST}: its settings are not this version's ({e})") from e


def build_run(task_name: str, config: TrainConfig, last: dict[str, Any] | None = None, quiet: bool = False):
    """(task, model) for a fresh run, or rebuilt from the run's last checkpoint (`last`) when resuming."""
    _, task_cls = TASKS[task_name]
    if last is not None:
        task = task_cls(config, tokenizer=Tokenizer.from_str(last["tokenizer"]), quiet=quiet)
        return task, build_model(last["kind"], last["config"], source=str(Path(config.out_dir) / LAST))
    torch.manual_seed(config.seed)
    task = task_cls(config, quiet=quiet)
    torch.manual_seed(config.seed)  # the same initial weights whatever the tokenizer training consumed
    return task, task.build_model()
