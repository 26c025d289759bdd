"""CPU time and memory of a server process and its children (its simulation workers: ui/workers.py),
read from Linux's /proc: what the load test and the CPU benchmark measure."""

from __future__ import annotations

import os


def children(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    kids.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return kids


def status_kib(pid: int, field_name: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (0 for one that has exited: a worker that stopped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its live children together (a server and its workers)."""
    return sum(cpu_s(p) for p in [pid, *children(pid)])


def tree_status_kib(pid: int, field_name: str) -> int:
    """A /proc status field (VmRSS, VmHWM: KiB) of a process and its live children together."""
    return sum(status_kib(p, field_name) for p in [pid, *children(pid)])
