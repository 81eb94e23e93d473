"""The Experiments page's state in its URL: which experiment, on which model and text, with which heads knocked out
and which target position. Reading a link never fails: what does not parse, or does not exist in this model, is
corrected, and every correction is said in words the page shows ("head cross.9.1 does not exist...")."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from . import patching_link

EXPERIMENTS = {"compare": "Edit and compare", "lens": "Logit lens", "knockout": "Knock out heads",
               "occlusion": "Which source words a target word needed", "patch": "Patch activations",
               "attribute": "Attribute a token"}
# The classifier's experiments (the logit lens and edit-and-compare are the translator's), as its page names them.
CLASSIFIER_EXPERIMENTS = {"knockout": "Knock out heads", "occlusion": "Which words the label needed",
                          "patch": "Patch activations", "attribute": "Attribute the label"}
AGAINST = {"edit": "an edited sentence", "int8": "the int8 model (same input)",
           "trained": "a model you trained on the Train page (same input)"}
# The attention kinds as the URL spells them, and as a reader names them.
# (runtime.spec.HEAD_KINDS, the engine's names)
KINDS = {"enc_self": "encoder self-attention", "dec_self": "decoder self-attention", "dec_cross": "cross-attention"}
ABLATIONS = {"zero": "zero (the head's output set to 0)", "mean": "mean (the head's output replaced by its mean)"}
# What a model keeps of its experiment across a switch to the other model and back: the widgets' values, named as
# their keys after "exp_" (the page's text, the experiment, and each experiment's own controls).
SETTINGS = ("text", "exp", "against", "other", "heads", "ablation", "over", "position", "method",
            "rather", "rather_label", *patching_link.KEYS.values())
MAX_TEXT = 400  # characters a link may carry (the model reads at most 128 tokens; the page says if it cut more)
MAX_HEADS = 72  # heads knocked out at once: 3+3 layers x 8 heads x 3 kinds is 72 on the shipped translator


class Head(NamedTuple):
    """One attention head: its kind ("enc_self", "dec_self", "dec_cross"), its layer and its head, both counted
    from 1 as the page shows them (runtime.experiments.heads.Head counts from 0: `engine`)."""
    kind: str
    layer: int
    head: int

    def key(self) -> str:
        return f"{self.kind}.{self.layer}.{self.head}"

    def label(self) -> str:
        return f"{KINDS[self.kind]}, layer {self.layer}, head {self.head}"

    def engine(self) -> tuple[str, int, int]:
        return self.kind, self.layer - 1, self.head - 1


@dataclass(frozen=True)
class Shape:
    """What a link's heads and positions must fit: the model's layers per kind and its heads per layer."""
    layers: dict[str, int]  # {"enc_self": n_layers, "dec_self": n_decoder_layers, "dec_cross": n_decoder_layers}
    heads: int

    @classmethod
    def of(cls, config: dict[str, Any], classifier: bool = False) -> Shape:
        if classifier:  # an encoder only: its self-attention is the one kind of head
            return cls({"enc_self": int(config.get("n_layers") or 1)}, int(config.get("n_heads") or 1))
        decoder = int(config.get("n_decoder_layers") or config.get("n_layers") or 1)
        return cls({"enc_self": int(config.get("n_layers") or 1), "dec_self": decoder, "dec_cross": decoder},
                   int(config.get("n_heads") or 1))

    def all_heads(self) -> list[Head]:
        return [Head(kind, layer, head) for kind, layers in self.layers.items() for layer in range(1, layers + 1)
                for head in range(1, self.heads + 1)]


@dataclass
class Experiment:
    """One experiment, as the page's widgets hold it and as its link says it."""
    model: str  # "translate:de-en"
    text: str
    exp: str = "compare"
    against: str = "edit"
    other: str = ""  # the edited sentence (against == "edit")
    heads: list[Head] = field(default_factory=list)
    ablation: str = "zero"
    position: int = 0  # the target position (0-based) the lens and occlusion look at
    notes: list[str] = field(default_factory=list)  # corrections made while drawing (a position past the end)
    patch: dict[str, Any] = field(default_factory=dict)  # the patching experiment's settings (patching_link.KEYS)
    rather: str = ""  # attribution's contrast: token B's piece (the classifier: the other label); "" for none

    def url(self) -> dict[str, str]:
        """The query parameters of this experiment's link (only what the experiment uses)."""
        params = {"model": self.model, "text": self.text, "exp": self.exp}
        if self.exp == "compare":
            params["against"] = self.against
            if self.against == "edit" and self.other:
                params["other"] = self.other
        if self.exp == "knockout" and self.heads:
            params["heads"] = ",".join(h.key() for h in self.heads)
            params["ablation"] = self.ablation
        if self.exp in ("lens", "occlusion", "attribute"):
            params["position"] = str(self.position)
        if self.exp == "attribute" and self.rather:
            params["rather"] = self.rather
        if self.exp == "patch":
            params |= ({"other": self.other} if self.other else {}) | patching_link.params(self.patch)
        return params


def parse_head(raw: str, shape: Shape) -> Head | str:
    """"dec_cross.2.5" -> Head("dec_cross", 2, 5), or the reason it is not a head of this model."""
    parts = raw.strip().split(".")
    if len(parts) != 3 or parts[0] not in shape.layers or not (parts[1].isdigit() and parts[2].isdigit()):
        return (f"“{raw[:40]}” is not a head of this model (write kind.layer.head, kind one of "
                f"{', '.join(shape.layers)}, e.g. {next(iter(shape.layers))}.1.2)")
    head = Head(parts[0], int(parts[1]), int(parts[2]))
    if not (1 <= head.layer <= shape.layers[head.kind] and 1 <= head.head <= shape.heads):
        return (f"head {head.key()} does not exist: this model has {shape.layers[head.kind]} {KINDS[head.kind]} "
                f"layers of {shape.heads} heads")
    return head


def parse_url(raw: dict[str, str], shapes: dict[str, Shape]) -> tuple[dict[str, Any], list[str]]:
    """A link's query parameters -> (the widget values it sets, the corrections made, in words). `shapes`: the
    models this app serves ("translate:de-en", "sentiment"), each with its heads. A value that is malformed or
    impossible for the link's model is dropped (the page's default stands) or cut to fit, and said."""
    models = list(shapes)
    values: dict[str, Any] = {}
    notes: list[str] = []
    if "model" in raw:
        if raw["model"] in models:
            values["model"] = raw["model"]
        else:
            notes.append(f"the model “{raw['model'][:40]}” is not one this app serves ({', '.join(models)}): "
                         "the first is shown")
    for name in ("text", "other"):
        if name in raw:
            text = raw[name]
            if len(text) > MAX_TEXT:
                notes.append(f"the link's {'text' if name == 'text' else 'edited text'} was {len(text)} characters "
                             f"long: it was cut to {MAX_TEXT}")
                text = text[:MAX_TEXT]
            values[name] = text
    shape = shapes[values.get("model", models[0])]
    classifier = values.get("model", models[0]) == "sentiment"
    for name, allowed in (("exp", CLASSIFIER_EXPERIMENTS if classifier else EXPERIMENTS), ("against", AGAINST),
                          ("ablation", ABLATIONS)):
        if name in raw:
            if raw[name] in allowed:
                values[name] = raw[name]
            else:
                notes.append(f"“{raw[name][:40]}” is not a known {name} for this model ({', '.join(allowed)}): the "
                             "default is used")
    if raw.get("heads"):
        heads: list[Head] = []
        for piece in raw["heads"].split(",")[:MAX_HEADS * 2]:
            head = parse_head(piece, shape)
            if isinstance(head, str):
                notes.append(f"{head}: it was left out")
            elif head not in heads:
                heads.append(head)
        values["heads"] = heads[:MAX_HEADS]
    if "position" in raw:
        value = raw["position"].strip()
        if value.isdigit() and int(value) <= 10_000:
            values["position"] = int(value)
        else:
            notes.append(f"the position “{value[:20]}” is not a whole number from 0: position 0 is shown")
    if raw.get("rather"):  # checked against the model's vocabulary (labels) by the page, which knows them
        values["rather_label" if classifier else "rather"] = raw["rather"][:patching_link.MAX_PIECE]
    patch_values, patch_notes = patching_link.parse(raw, classifier)
    return values | patch_values, notes + patch_notes


def clamp_position(position: int, length: int) -> tuple[int, str | None]:
    """A position inside 0..length-1, and the note when a link's position had to move."""
    if length <= 0 or 0 <= position < length:
        return max(0, position), None
    return length - 1, (f"the link's position {position} is past this translation's last token "
                        f"(position {length - 1}): the last is shown")
