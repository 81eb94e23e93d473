"""A session's training runs as the page keeps them: a record per run (its settings, the events read so far, where
its files are, and what the export and the onnxruntime check found), and the model size of a setting, estimated
without torch before anything is built. No Streamlit here."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runtime import toy

SPECIALS = len(toy.RESERVED)  # <pad> <s> </s> <unk> <2en> <2de> <2out>: tx.toy.vocab's ids before the task's symbols
ADD_SYMBOLS = 11  # the add task's symbols: the ten digits and "+"
REASONS = {"target": "reached the accuracy asked for", "time": "reached its time cap", "steps": "reached its step cap",
           "stopped": "stopped", "diverged": "stopped: the loss became NaN (try a smaller learning rate or warm-up)"}


@dataclass
class EventReader:
    """Reads the complete new lines of a run's events.jsonl (a line being written stays for the next read)."""

    path: Path
    offset: int = 0
    events: list[dict] = field(default_factory=list)

    def read(self) -> list[dict]:
        if not self.path.is_file():
            return []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        complete = chunk[:chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        new = [json.loads(line) for line in complete.decode("utf-8").splitlines() if line.strip()]
        self.events += new
        return new


@dataclass
class RunRecord:
    number: int
    config: dict[str, Any]
    run_dir: str
    label: str
    events: list[dict] = field(default_factory=list)
    offset: int = 0  # bytes of events.jsonl read so far
    finished: bool = False
    exported: dict[str, Any] | None = None  # export_report.json's summary, once exported
    served: dict[str, Any] | None = None  # tx.toy.serving's report
    zipped: bytes | None = None  # the exported model directory as a zip, for its download button
    ended_by: str | None = None  # the click that ended the run while it trained ("you changed the task"), if one did

    @property
    def model_dir(self) -> Path:
        return Path(self.run_dir) / toy.MODEL_DIR

    def read_events(self) -> list[dict]:
        reader = EventReader(Path(self.run_dir) / toy.EVENTS_FILE, self.offset)
        new = reader.read()
        self.offset = reader.offset
        self.events += new
        return new

    def last(self, kind: str) -> dict | None:
        return next((e for e in reversed(self.events) if e.get("event") == kind), None)

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e.get("event") == kind]

    @property
    def saved(self) -> bool:
        return self.last("saved") is not None and (self.model_dir / "config.json").is_file()

    def summary(self) -> str:
        done, error = self.last("done"), self.last("error")
        if error:
            return f"failed: {error['message']}"
        because = f" because {self.ended_by}" if self.ended_by else ""
        if not done:
            if not self.finished:
                return "running"
            step = self.last("step")
            return f"stopped after {steps(step['step'])}{because}, before it saved a model" if step else \
                f"stopped before its first step{because}"
        return (f"{REASONS.get(done['reason'], done['reason'])} after {steps(done['step'])} in "
                f"{done['seconds']:.1f} s{because if done['reason'] == 'stopped' else ''}: "
                f"{percent(done['accuracy'])} of held-out sequences exactly right")

    def no_model(self) -> str:
        """Why there is nothing to export, told with the run's own summary (never a second, different story)."""
        if self.last("done") and not self.last("error"):  # it finished its last step, then was ended while saving
            return (f"No model to export: this run {self.summary()}, but it was ended before its model was "
                    "written. Train again.")
        return f"No model to export: this run {self.summary()}. Train again."


def steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def percent(share: float, decimals: int = 1) -> str:
    """A share as a percentage rounded down: 199 of 200 right reads 99.5%, 1999 of 2000 99.9%, never 100.0% while
    one is wrong. Rounded to 9 places first, as 0.995 is 0.99499999... in binary and would floor to 99.4%."""
    return f"{math.floor(round(share * 10 ** (decimals + 2), 9)) / 10 ** decimals:.{decimals}f}%"


def progress_text(step: dict, evaluation: dict | None, cap_s: float) -> str:
    """The live progress bar's words: the step, the time against the cap, the loss and the last held-out score."""
    accuracy = f" · held-out exact {percent(evaluation['accuracy'])}" if evaluation else ""
    return f"step {step['step']} · {step['seconds']:.0f} of {cap_s:.0f} s · loss {step['loss']:.3f}{accuracy}"


def run_label(number: int, config: dict[str, Any]) -> str:
    """"Run 2: reverse, no positions" - the ablation knobs set away from the page's defaults."""
    off = [name for name, key in (("no positions", "positional"), ("unscaled", "scale_scores")) if not config[key]]
    extra = [] if config["pre_norm"] else ["post-LN"]
    return f"Run {number}: {config['task']}" + "".join(f", {x}" for x in off + extra)


def parameter_count(config: dict[str, Any], vocab_size: int) -> int:
    """Seq2SeqTransformer's parameters for these settings (tied embeddings and generator, as tx.toy builds it)."""
    d, f = config["d_model"], config["d_ff"]
    attention, feed_forward, norm = 4 * (d * d + d), 2 * d * f + f + d, 2 * d
    encoder = config["n_layers"] * (attention + feed_forward + 2 * norm)
    decoder = config["n_decoder_layers"] * (2 * attention + feed_forward + 3 * norm)
    final = 2 * norm if config["pre_norm"] else 0
    return vocab_size * d + encoder + decoder + final


def vocabulary_size(config: dict[str, Any], file_vocabulary: int | None) -> int:
    if config["task"] == "file":
        return SPECIALS + (file_vocabulary or 0)
    return SPECIALS + (ADD_SYMBOLS if config["task"] == "add" else config["vocab"])


def size_problem(parameters: int) -> str | None:
    """Why a model of this size is refused (runtime.toy.MAX_PARAMETERS, which tx.toy.engine enforces), or None."""
    if parameters <= toy.MAX_PARAMETERS:
        return None
    return (f"This model has {parameters:,} parameters; at most {toy.MAX_PARAMETERS:,} train on this server. Make "
            "d_model, d_ff or the layers smaller.")
