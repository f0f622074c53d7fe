"""bench/host.py: the host-load figures the benchmarks print beside their timings."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from bench import host

HZ = os.sysconf("SC_CLK_TCK")


def test_parse_stat_reads_the_aggregate_line_in_seconds() -> None:
    text = (f"cpu  {HZ * 10} 0 {HZ * 2} {HZ * 50} 0 0 {HZ} {HZ * 3} 0 0\n"
            f"cpu0 {HZ * 5} 0 {HZ} {HZ * 25} 0 0 0 0 0 0\nintr 1 2 3\n")
    cpu = host.parse_stat(text)
    assert cpu["user"] == 10 and cpu["system"] == 2 and cpu["idle"] == 50
    assert cpu["softirq"] == 1 and cpu["steal"] == 3
    with pytest.raises(ValueError, match="no aggregate"):
        host.parse_stat("cpu0 1 2 3\n")


def test_between_splits_busy_time_into_ours_others_and_steal() -> None:
    zero = dict.fromkeys(host.FIELDS, 0.0)
    before = host.Snapshot(0.0, zero, own_cpu_s=1.0)
    after = host.Snapshot(10.0, {**zero, "user": 6.0, "system": 1.0, "idle": 12.0,
                                 "steal": 1.0}, own_cpu_s=4.0)
    load = host.between(before, after)
    assert load.wall_s == 10.0
    assert load.steal_pct == pytest.approx(5.0)  # 1 of 20 CPU seconds
    assert load.others_cpu_s == pytest.approx(4.0)  # 7 busy − 3 ours
    assert load.others_pct == pytest.approx(20.0)
    assert "steal 5.0 %" in load.line()
    unknown = host.between(host.Snapshot(0.0, {}, 0.0), after)
    assert math.isnan(unknown.steal_pct) and math.isnan(unknown.others_pct)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_a_childs_cpu_counts_as_ours_while_it_runs_and_after_it_is_reaped() -> None:
    start = host.tree_cpu_s()
    child = subprocess.Popen([sys.executable, "-c",
                              "import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 0.4: pass\n"
                              "import sys; sys.stdout.write('x'); sys.stdout.flush()\n"
                              "time.sleep(30)"], stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.read(1) == b"x"
        live = host.tree_cpu_s() - start  # the child is alive: found through /proc
        assert live >= 0.3
    finally:
        child.kill()
        child.wait()
    assert host.tree_cpu_s() - start >= live  # reaped: now in our children's time


def test_the_speed_probe_times_a_fixed_loop() -> None:
    small, large = host.speed_probe(10_000, tries=1), host.speed_probe(1_000_000, tries=1)
    assert 0 < small < large and math.isfinite(large)
