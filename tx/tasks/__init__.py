"""The training tasks: what the generic `Trainer` is told about data, loss and evaluation, per task."""
from .translate import (
    LABELS,
    TASKS,
    PretrainConfig,
    PretrainTask,
    SentimentConfig,
    SentimentTask,
    TranslateConfig,
    TranslateTask,
    mix_rows,
    parse_mix,
)

__all__ = ["TASKS", "LABELS", "TranslateConfig", "TranslateTask", "SentimentConfig", "SentimentTask",
           "PretrainConfig", "PretrainTask", "mix_rows", "parse_mix"]
