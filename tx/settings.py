"""A run's settings from the command line: a JSON file (`--config`), then `--set key=value` on top, each checked
against the run config's declared types before anything runs.

Settings are named flat, the nested model config's with a dot: `lr`, `model.d_model`. A JSON file nests them
as the config does: {"lr": 5e-4, "model": {"d_model": 512}}.
"""
from __future__ import annotations

import json
import typing
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

NONE = type(None)


def declared(config_cls: type) -> dict[str, Any]:
    """Every setting's flat name -> its declared type; a nested config's fields as "model.d_model"."""
    hints, out = typing.get_type_hints(config_cls), {}
    for f in fields(config_cls):
        kind = hints[f.name]
        if is_dataclass(kind):
            inner = typing.get_type_hints(kind)
            out.update({f"{f.name}.{g.name}": inner[g.name] for g in fields(kind)})
        else:
            out[f.name] = kind
    return out


def flatten(values: dict[str, Any]) -> dict[str, Any]:
    """{"lr": 1e-3, "model": {"d_model": 256}} -> {"lr": 1e-3, "model.d_model": 256}."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def nest(values: dict[str, Any]) -> dict[str, Any]:
    """The inverse of `flatten`: keyword arguments for the run config (a nested config as a dict, see TrainConfig)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        group, dot, name = key.partition(".")
        if dot:
            out.setdefault(group, {})[name] = value
        else:
            out[key] = value
    return out


def type_name(kind: Any) -> str:
    return " or ".join("None" if k is NONE else k.__name__ for k in typing.get_args(kind) or (kind,))


def suggestion(keys: list[str], names: dict[str, Any]) -> str:
    """" (did you mean model.d_model?)" where an unknown name is a nested config's field, else ""."""
    hints = [n for key in keys for n in names if n.endswith(f".{key}")]
    return f" (did you mean {', '.join(hints)}?)" if hints else ""


def parse_value(text: str, kind: Any, key: str) -> Any:
    """'--set key=value' text -> the setting's declared type, or a clear error."""
    options = typing.get_args(kind)
    if NONE in options:  # "int | None": none/null, or the other type
        if text.strip().lower() in ("none", "null"):
            return None
        kind = next(k for k in options if k is not NONE)
    if kind is bool:
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{key} is a bool: use true or false, not {text!r}")
    if kind in (int, float):
        try:
            return kind(float(text)) if kind is int and float(text).is_integer() else kind(text)
        except ValueError:
            raise ValueError(f"{key} is {kind.__name__}: {text!r} is not a number") from None
    return text


def fits(value: Any, kind: Any) -> bool:
    """Is a JSON value of the declared type? JSON true is a Python int, but not a number here."""
    options = typing.get_args(kind)
    if options:
        return any(fits(value, k) for k in options)
    if kind is NONE or isinstance(value, bool):
        return value is None if kind is NONE else kind is bool
    return isinstance(value, kind) or (kind is float and isinstance(value, int))


def apply_overrides(config_cls: type, values: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Flat `values` with each "key=value" of `overrides` parsed and laid on top."""
    names = declared(config_cls)
    out = dict(values)
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ValueError(f"--set takes key=value, got {item!r}")
        if key not in names:
            raise ValueError(f"unknown setting {key!r}{suggestion([key], names)}; settings are: {', '.join(names)}")
        out[key] = parse_value(raw, names[key], key)
    return out


def load_config_file(config_cls: type, path: Path) -> dict[str, Any]:
    """The flat settings of a JSON config file, each checked against its declared type."""
    try:
        values = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read the config file ({e})") from e
    names = declared(config_cls)
    if not isinstance(values, dict):
        raise ValueError(f"{path}: expected a JSON object of settings")
    for group in {n.partition(".")[0] for n in names if "." in n} & values.keys():
        if not isinstance(values[group], dict):
            raise ValueError(f"{path}: {group} must be an object of settings, e.g. \"{group}\": {{...}}")
    values = flatten(values)
    strangers = sorted(set(values) - set(names))
    if strangers:
        raise ValueError(f"{path}: unknown settings {strangers}{suggestion(strangers, names)}")
    for key, value in values.items():
        if not fits(value, names[key]):
            raise ValueError(f"{path}: {key} must be {type_name(names[key])}, got {value!r}")
    return values


def command_line(config_cls: type, config_file: Path | None, overrides: list[str]) -> dict[str, Any]:
    """The flat settings a command line gives: the config file's, then --set's on top."""
    values = load_config_file(config_cls, config_file) if config_file is not None else {}
    return apply_overrides(config_cls, values, overrides)
