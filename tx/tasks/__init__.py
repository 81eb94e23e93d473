"""The training tasks: what the generic `Trainer` is told about data, loss and evaluation, one module per task
(their run configs beside them), `base` for what they share and `mix` for weighting a corpus by source."""
from .mix import mix_rows, parse_mix
from .pretrain import PretrainConfig, PretrainTask
from .sentiment import SentimentConfig, SentimentTask
from .translate import TranslateConfig, TranslateTask

# `python -m tx train NAME` -> (its run config, its task)
TASKS = {"translate": (TranslateConfig, TranslateTask), "sentiment": (SentimentConfig, SentimentTask),
         "pretrain": (PretrainConfig, PretrainTask)}

__all__ = ["TASKS", "TranslateConfig", "TranslateTask", "SentimentConfig", "SentimentTask", "PretrainConfig",
           "PretrainTask", "mix_rows", "parse_mix"]
