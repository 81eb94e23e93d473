"""What the CPU can do, where it decides how the int8 graphs are made and whether they may load."""
from __future__ import annotations

from pathlib import Path


def cpu_has_vnni(cpuinfo: str | None = None) -> bool:
    """Whether this CPU has VNNI (int8 dot products accumulated in int32): the flags in /proc/cpuinfo."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False  # not Linux: assume the worst, 7-bit weights are safe everywhere
    flags = {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.split(":", 1)[-1].split()}
    return bool(flags & {"avx512_vnni", "avx_vnni", "avxvnni", "amx_int8"})
