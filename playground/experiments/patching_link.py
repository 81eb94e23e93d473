"""The patching experiment's part of the Experiments page's link: which grid, which cell re-translated, and the
metric's position and token B. Read like the rest of link.py: what does not parse is dropped (the page's default
stands) and said."""
from __future__ import annotations

from typing import Any

# The grids as the URL names them (runtime.experiments' sites), and as the page names them.
TRANSLATOR_GRIDS = {"enc_resid": "Encoder residual stream (layer × source position)",
                    "dec_resid": "Decoder residual stream (layer × target position)",
                    "enc_self": "Heads: encoder self-attention", "dec_self": "Heads: decoder self-attention",
                    "dec_cross": "Heads: cross-attention", "memory": "Encoder memory (each source position, and all)"}
CLASSIFIER_GRIDS = {"enc_resid": "Residual stream (layer × position)", "enc_self": "Heads: self-attention"}
AUTO = "auto"  # the metric's default position / token B (the first position where the translations differ)
MAX_PIECE = 40  # characters of a token piece a link may carry
# link parameter -> session key (after "exp_"); link.SETTINGS keeps them across a model switch
KEYS = {"grid": "pgrid", "cell": "pcell", "at": "pat", "b": "pb"}


def grids_of(classifier: bool) -> dict[str, str]:
    return CLASSIFIER_GRIDS if classifier else TRANSLATOR_GRIDS


def parse_cell(raw: str) -> tuple[int, int] | None:
    """"2.3" -> (2, 3): a grid cell as row.column, both from 0."""
    parts = raw.strip().split(".")
    if len(parts) == 2 and all(p.isdigit() and len(p) <= 4 for p in parts):
        return int(parts[0]), int(parts[1])
    return None


def parse(raw: dict[str, str], classifier: bool) -> tuple[dict[str, Any], list[str]]:
    """The link's patching values -> ({session key after "exp_": value}, corrections in words)."""
    values: dict[str, Any] = {}
    notes: list[str] = []
    grids = grids_of(classifier)
    if "grid" in raw:
        if raw["grid"] in grids:
            values["pgrid"] = raw["grid"]
        else:
            notes.append(f"“{raw['grid'][:40]}” is not a patching grid of this model ({', '.join(grids)}): the "
                         "first is shown")
    if raw.get("cell"):
        if parse_cell(raw["cell"]) is not None:
            values["pcell"] = raw["cell"].strip()
        else:
            notes.append(f"the cell “{raw['cell'][:20]}” is not row.column (e.g. 2.3): no cell is re-run")
    if "at" in raw:
        value = raw["at"].strip()
        if value == AUTO or (value.isdigit() and int(value) <= 10_000):
            values["pat"] = value if value == AUTO else int(value)
        else:
            notes.append(f"the metric position “{value[:20]}” is not a whole number from 0 or auto: auto is used")
    if "b" in raw:
        values["pb"] = raw["b"][:MAX_PIECE]
    return values, notes


def params(patch: dict[str, Any]) -> dict[str, str]:
    """The link parameters of the patching experiment's settings (session values under link names)."""
    out = {}
    for name, key in KEYS.items():
        value = patch.get(key)
        if value not in (None, "", AUTO):
            out[name] = str(value)
    return out
