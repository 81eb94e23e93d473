"""export_report.json (written by `python -m export`, layout in export/report.py) read into typed fields, and put
in the words and tables the Model card shows. No Streamlit here.

The app has no torch, so it cannot import export's own dataclass: this is the reading side of the same layout.
A field that is missing or of another type (a report from an older export) reads as its default, and the card
leaves that part out instead of failing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SYSTEMS = {"torch": "PyTorch (reference)", "fp32": "onnxruntime fp32", "int8": "onnxruntime int8"}
SCALED = {"accuracy": "accuracy %", "agreement": "same output as PyTorch %",
          "accuracy_delta": "accuracy change (points)"}  # shares (0-1) shown as percentages
LABELS = {"bleu": "BLEU", "bleu_delta": "BLEU change", "seconds": "seconds", "disagreements": "outputs that differ",
          "max_prob_diff": "largest probability difference"}


def typed(obj: Any, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    """obj[key] when obj is a dict holding a value of `kind` there, else `default`."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, kind) else default


def direction_words(direction: str) -> str:
    """"de-en" -> "DE → EN" (as models.direction_label writes a direction); any other key as it is."""
    return " → ".join(part.upper() for part in direction.split("-", 1)) if "-" in direction else direction


@dataclass
class GraphCheck:
    """One exported file checked against PyTorch."""
    file: str | None  # "encoder.fp32.onnx"
    graph: str | None  # "encoder"
    precision: str | None  # "fp32" or "int8"
    bytes: int  # the file's size
    max_diff: dict[str, float]  # output name -> max |onnx - torch| over the cases
    atol: float | None  # the tolerance enforced on every output; None: reported, not enforced (int8)
    ok: bool | None  # within the tolerance
    cases: int  # input shapes it was run on

    @classmethod
    def from_json(cls, obj: Any) -> GraphCheck:
        return cls(typed(obj, "file", str), typed(obj, "graph", str), typed(obj, "precision", str),
                   typed(obj, "bytes", int, 0), typed(obj, "max_diff", dict, {}),
                   typed(obj, "atol", (int, float)), typed(obj, "ok", bool), len(typed(obj, "cases", list, [])))


@dataclass
class QualitySection:
    """Text-level agreement of the ONNX files with PyTorch on held-out text (`quality.<name>`)."""
    name: str  # "translation" or "classification"
    counted: int | None  # sentences per direction or reviews
    origin: str | None  # the file the text came from
    method: str | None  # the translator's decoding
    systems: dict[str, dict[str, Any]]  # "torch" / "fp32" / "int8" -> its scores and differences

    @classmethod
    def from_json(cls, name: str, obj: dict[str, Any]) -> QualitySection:
        systems = {k: v for k, v in typed(obj, "systems", dict, {}).items() if isinstance(v, dict)}
        return cls(name, typed(obj, "sentences", int) or typed(obj, "texts", int), typed(obj, "origin", str),
                   typed(obj, "method", str), systems)

    def heading(self) -> str:
        noun = "sentences per direction" if self.name == "translation" else "reviews"
        return (f"**Agreement on held-out text ({self.name})**: " + (f"{self.counted} {noun} " if self.counted else "")
                + (f"from `{self.origin}`" if self.origin else "")
                + (f", {self.method} decoding" if self.method else ""))

    def rows(self) -> tuple[list[dict[str, Any]], list[str]]:
        """One table row per system with readable columns, and the first difference found as a sentence."""
        rows, notes = [], []
        for system, result in self.systems.items():
            name = SYSTEMS.get(system, system)
            row: dict[str, Any] = {"system": name}
            for key, value in result.items():
                if key == "first_disagreement":
                    if isinstance(value, dict):
                        direction = value.get("direction", "")
                        notes.append(f"First difference ({name}" + (f", {direction_words(direction)}" if direction
                                                                      else "")
                                     + f"): “{value.get('source', '')}” → PyTorch “{value.get('torch', '')}”, "
                                     f"onnxruntime “{value.get('onnx', '')}”.")
                elif isinstance(value, dict):
                    for part, number in value.items():
                        row[f"{LABELS.get(key, key.replace('_', ' '))} {direction_words(part)}"] = number
                elif key in SCALED and isinstance(value, int | float):
                    row[SCALED[key]] = round(value * 100, 2)
                else:
                    row[LABELS.get(key, key.replace("_", " "))] = value
            rows.append(row)
        return rows, notes


@dataclass
class ExportReport:
    ok: bool  # every check passed
    exporter: str  # "?" when not recorded
    opset: int | str  # "?" when not recorded
    precisions: list[str]
    created: str  # ISO time, "?" when not recorded
    failures: list[str] = field(default_factory=list)  # why `ok` is False
    warnings: list[str] = field(default_factory=list)  # targets missed, checks skipped
    graphs: list[GraphCheck] = field(default_factory=list)
    quality: list[QualitySection] = field(default_factory=list)

    @classmethod
    def from_json(cls, obj: Any) -> ExportReport | None:
        """None for anything that is not a report (a missing or unreadable file reads as None)."""
        if not isinstance(obj, dict) or not obj:
            return None
        return cls(ok=bool(obj.get("ok")), exporter=typed(obj, "exporter", str, "?"),
                   opset=typed(obj, "opset", (int, str), "?"), precisions=typed(obj, "precisions", list, []),
                   created=typed(obj, "created", str, "?"), failures=typed(obj, "failures", list, []),
                   warnings=typed(obj, "warnings", list, []),
                   graphs=[GraphCheck.from_json(g) for g in typed(obj, "graphs", list, [])],
                   quality=[QualitySection.from_json(name, section)
                            for name, section in typed(obj, "quality", dict, {}).items() if isinstance(section, dict)])

    def status_line(self) -> str:
        """Passed (with how many warnings) or FAILED, with the tools, opset, precisions and date."""
        warned = len(self.warnings)
        status = "FAILED" if not self.ok else f"passed with {warned} warning(s)" if warned else "passed"
        return (f"Export **{status}** · {self.exporter} · opset {self.opset} · precisions "
                f"{', '.join(self.precisions)} · {self.created}")

    def graph_rows(self) -> list[dict[str, Any]]:
        return [{"file": g.file, "graph": g.graph, "precision": g.precision, "MB": round(g.bytes / 1e6, 2),
                 "max |onnx - torch|": max(g.max_diff.values(), default=None),
                 "tolerance": f"≤ {g.atol:g}" if g.atol is not None else "not enforced", "parity ok": g.ok}
                for g in self.graphs]

    def parity_note(self) -> str:
        """The tolerance each precision's files were held to."""
        tolerances = {g.precision: g.atol for g in self.graphs}
        cases = max((g.cases for g in self.graphs), default=0)
        sentences = [f"Each file is run on random inputs{f' of {cases} shapes' if cases else ''} and compared with "
                     "PyTorch output by output (`max |onnx - torch|`)."]
        sentences += [f"The {p} files must match PyTorch within an absolute tolerance of {atol:g} on every output."
                      for p, atol in tolerances.items() if atol is not None]
        loose = [p for p, atol in tolerances.items() if atol is None]
        if loose:
            sentences.append(f"For the {' and '.join(loose)} files the differences are reported, not enforced: "
                             "quantisation changes the numbers by design, so they are judged by their agreement on "
                             "held-out text below.")
        return " ".join(sentences)

    def opset_words(self) -> str:
        """The Home page's short form: the opset, and FAILED when the export did."""
        return f"ONNX opset {self.opset}" + ("" if self.ok else " (export FAILED)")
