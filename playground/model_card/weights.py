"""How many parameters a model.pt holds, read without torch (the app serves the ONNX export and has no torch).

model.pt is what torch.save writes for a state dict: a zip whose `<name>/data.pkl` pickles an OrderedDict of
tensors, each rebuilt by `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` from a storage the
pickle names by key (`<name>/data/<key>` in the zip). Only those names are let through the unpickler: anything else
is refused, so a file that is not a plain state dict runs no code here and counts as unknown.
"""
from __future__ import annotations

import math
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any, NamedTuple


class TensorShape(NamedTuple):
    storage: str  # the storage's key: tied weights (shared embeddings) are one storage, counted once
    offset: int
    size: tuple[int, ...]


def _tensor(storage: str, offset: int, size: tuple[int, ...], *_: Any) -> TensorShape:
    return TensorShape(storage, int(offset), tuple(int(n) for n in size))


class _StateDictShapes(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _tensor
        if module == "torch" and name.endswith("Storage"):  # the storage's dtype: irrelevant to a count
            return name
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a plain state dict")

    def persistent_load(self, pid: Any) -> str:
        # ("storage", storage type, key, device, number of elements): the key identifies the storage
        return str(pid[2])


def parameter_count(path: str | Path) -> int | None:
    """Parameters in a saved state dict, tied weights counted once; None for any file that is not one."""
    try:
        with zipfile.ZipFile(path) as archive:
            name = next(n for n in archive.namelist() if n.endswith("/data.pkl"))
            state = _StateDictShapes(archive.open(name)).load()
    except Exception:  # missing, not a zip, not torch's layout, or a pickle of something else
        return None
    shapes = {t for t in state.values() if isinstance(t, TensorShape)} if isinstance(state, dict) else set()
    return sum(math.prod(t.size) for t in shapes) or None
