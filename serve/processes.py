"""This machine's Serve processes: which they are, the CPU time and memory they use, and what they listen on
(`python -m bench serve_load` and the tests measure the service with them)."""
from __future__ import annotations

import os
from pathlib import Path

SERVE_TITLES = ("ray::ServeReplica", "ray::ProxyActor", "ray::ServeController", "ray::HAProxyManager")


def serve_processes() -> dict[int, str]:
    """This machine's Serve processes (replicas, proxy, controller, HAProxy and its manager): pid -> name."""
    names = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title.startswith(SERVE_TITLES):
            names[int(pid)] = title.split(".")[0].replace("ray::", "")
        elif title.endswith("/haproxy"):
            names[int(pid)] = "HAProxy"
    return names


def stat_fields(path: str) -> list[str]:
    """The fields of a /proc/PID/stat (or /proc/PID/task/TID/stat) file after the name, which may hold spaces or
    ")": [0] the state, [1] the parent's pid, [11] and [12] user and system clock ticks. OSError where it is gone."""
    return Path(path).read_text().rsplit(")", 1)[1].split()


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) one process has used so far (/proc; OSError where it cannot be read)."""
    fields = stat_fields(f"/proc/{pid}/stat")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_processes_cpu_s() -> dict[str, float]:
    """CPU seconds (user + system) used so far by this machine's Serve processes, by name: where a request's time
    goes besides the model."""
    cpu_s: dict[str, float] = {}
    for pid, name in serve_processes().items():
        try:
            cpu_s[name] = cpu_s.get(name, 0.0) + process_cpu_s(pid)
        except (OSError, IndexError, ValueError):
            continue
    return cpu_s


def serve_processes_rss_mb() -> dict[str, float]:
    """Resident memory of this machine's Serve processes, by name and pid."""
    from .workers import statm_mb  # imports the runtime: only the benchmark and the tests ask

    rss_mb: dict[str, float] = {}
    for pid, name in serve_processes().items():
        try:
            rss_mb[f"{name} ({pid})"] = statm_mb(pid)
        except (OSError, IndexError, ValueError):
            continue
    return rss_mb


def descendants(pid: int) -> set[int]:
    """pid's child processes, theirs, and so on (Ray's GCS, raylet and agents are this process' children after
    ray.init; its workers are the raylet's)."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            parent = int(stat_fields(f"/proc/{entry}/stat")[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    seen, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _listening_inodes() -> dict[str, tuple[str, int]]:
    """inode -> (address, port) of every listening TCP socket on this machine (/proc/net/tcp and tcp6)."""
    import ipaddress

    sockets = {}
    for table, width in (("tcp", 4), ("tcp6", 16)):
        try:
            lines = Path(f"/proc/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != "0A":  # TCP_LISTEN
                continue
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)
            # the kernel prints each 32-bit word in host (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, width, 4))
            sockets[fields[9]] = (str(ipaddress.ip_address(raw)), int(port, 16))
    return sockets


def listening_sockets(pids) -> list[tuple[str, int, int, str]]:
    """(address, port, pid, process name) of each TCP socket the processes `pids` listen on."""
    inodes = _listening_inodes()
    sockets = []
    for pid in sorted(pids):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:  # an fd can close between the listing and the read (listdir's own, for one)
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            inode = link[len("socket:["):-1] if link.startswith("socket:[") else None
            if inode in inodes:
                sockets.append((*inodes[inode], pid, name))
    return sorted(set(sockets))


def service_listeners() -> list[tuple[str, int, int, str]]:
    """What this machine's service listens on: Ray's processes started from here and Serve's (HAProxy included)."""
    return listening_sockets(descendants(os.getpid()) | set(serve_processes()))
