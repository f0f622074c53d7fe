"""What else the host did while a benchmark ran: CPU steal and the CPU of other processes.

Why: on these shared 2-core hosts the same code measures up to twice as slow from one round
to the next, minutes apart, with nothing else of ours running. "Measure on a quiet machine"
needs a number to check that by. The kernel counts, per CPU state, the time since boot
(``/proc/stat``); over a run, busy time minus the CPU of this process tree (servers and
browsers included) is what *other* processes used, and ``steal`` is time the hypervisor gave
to other guests — load that ``os.getloadavg()`` does not show. Linux only; elsewhere the
shares are NaN.
"""

from __future__ import annotations

import math
import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

STAT = Path("/proc/stat")
#: /proc/stat's aggregate ``cpu`` line, in order (guest time is already inside user/nice).
FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
BUSY = ("user", "nice", "system", "irq", "softirq")


@dataclass(frozen=True)
class Snapshot:
    """Kernel CPU counters (seconds, all CPUs) and this process tree's CPU at one moment."""

    at: float
    cpu: dict[str, float]
    own_cpu_s: float


@dataclass(frozen=True)
class HostLoad:
    """What the host did between two snapshots (CPU time: all CPUs together)."""

    wall_s: float
    steal_pct: float  # of all CPU time: time the hypervisor took away
    others_cpu_s: float  # CPU seconds of processes outside this process tree
    others_pct: float  # the same, as a share of all CPU time

    def line(self) -> str:
        return (f"host during the run: {self.wall_s:.0f} s; CPU steal {self.steal_pct:.1f} % "
                f"of all CPU time; other processes {self.others_cpu_s:.1f} CPU s "
                f"({self.others_pct:.1f} %)")

    def as_dict(self) -> dict[str, float]:
        return {"wall_s": self.wall_s, "steal_pct": self.steal_pct,
                "others_cpu_s": self.others_cpu_s, "others_pct": self.others_pct}


def speed_probe(n: int = 1_000_000, tries: int = 3) -> float:
    """Seconds a fixed pure-Python loop takes on one core, the best of ``tries``. Why: a host
    can be slower from one round to the next with no steal and no other process to show for it
    (a neighbour's cache or memory traffic, a lower clock); the same loop timed beside each
    measurement says how fast the machine itself was at that moment."""
    best = math.inf
    for _ in range(tries):
        t0 = time.perf_counter()
        x = 0
        for i in range(n):
            x = (x * 31 + i) & 0xFFFFFFFF
        best = min(best, time.perf_counter() - t0)
    return best


def _proc_stat(pid: str) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and its reaped children) from /proc/PID/stat."""
    try:
        text = (Path("/proc") / pid / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # after "pid (comm) ": state, ppid, ...
    hz = os.sysconf("SC_CLK_TCK")
    # utime, stime, cutime, cstime are fields 14–17 of the line, 12–15 after the comm
    return int(fields[1]), sum(int(x) for x in fields[11:15]) / hz


def tree_cpu_s(root: int | None = None) -> float:
    """CPU seconds used by ``root`` (default this process) and every descendant, live or
    reaped: a live process's own time plus its reaped children's (which the kernel adds to
    it when it waits for them). What a live server or browser of ours used counts as ours."""
    root = os.getpid() if root is None else root
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := _proc_stat(entry.name)) is not None:
            stats[int(entry.name)] = st
    if root not in stats:  # no /proc: this process and its reaped children only
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += stats[pid][1]
        todo += children.get(pid, [])
    return total


def parse_stat(text: str) -> dict[str, float]:
    """The aggregate ``cpu`` line of /proc/stat in seconds per field (missing fields 0)."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            hz = os.sysconf("SC_CLK_TCK")
            ticks = [int(x) for x in parts[1:1 + len(FIELDS)]]
            ticks += [0] * (len(FIELDS) - len(ticks))
            return {name: t / hz for name, t in zip(FIELDS, ticks, strict=True)}
    raise ValueError("no aggregate 'cpu' line in /proc/stat")


def snapshot() -> Snapshot:
    try:
        cpu = parse_stat(STAT.read_text(encoding="ascii"))
    except (OSError, ValueError):
        cpu = {}
    return Snapshot(time.monotonic(), cpu, tree_cpu_s())


def between(before: Snapshot, after: Snapshot) -> HostLoad:
    """The host's load between two :func:`snapshot` s. A descendant that exited between them
    counts as ours only if it was reaped (its time then sits in its parent's)."""
    wall = after.at - before.at
    if not before.cpu or not after.cpu:
        return HostLoad(wall, math.nan, math.nan, math.nan)
    d = {k: after.cpu[k] - before.cpu[k] for k in FIELDS}
    total = sum(d.values())
    busy = sum(d[k] for k in BUSY)
    others = busy - (after.own_cpu_s - before.own_cpu_s)
    if total <= 0:
        return HostLoad(wall, math.nan, others, math.nan)
    return HostLoad(wall, 100.0 * d["steal"] / total, others, 100.0 * others / total)
