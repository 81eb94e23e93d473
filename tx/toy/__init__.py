"""Toy tasks for training a small Transformer in seconds (the "Train your own" page): synthetic tasks and the
user's own pairs (`tasks`), a run engine with caps, a stop flag and events (`engine`), the shipped model directory
(`ship`), and its check through PyTorch and onnxruntime after `python -m export` (`serving`). `worker` runs them in
a process of their own for the page. The contract the page shares with them (the upload format, its checks and
limits, the vocabulary's reserved tokens, the direction, the size cap) is torch-free: runtime.toy."""
from runtime.toy import DataError, ParallelData, parse

from .engine import RunConfig, RunResult, train
from .tasks import SYNTHETIC, TASKS, ExampleSource, SyntheticTask

__all__ = ["RunConfig", "RunResult", "train", "SYNTHETIC", "TASKS", "ExampleSource", "SyntheticTask", "DataError",
           "ParallelData", "parse"]
