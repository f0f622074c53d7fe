"""bench/app.py: which run a nearest-rank percentile reports."""

from __future__ import annotations

from bench import app


def test_p95_of_few_runs_is_the_slowest_run() -> None:
    """With 8 or 10 runs one slow load is the p95; with 20 the slowest one is left out."""
    assert app.pct_rank(8, .95) == 8 and app.pct_rank(10, .95) == 10
    assert app.pct_rank(20, .95) == 19
    times = [0.8] * 18 + [1.02, 1.3]
    assert app.pct(times, .95) == 1.02
    assert app.pct(times[-8:], .95) == 1.3
    assert app.pct([0.9], .95) == 0.9 and app.pct([0.9, 0.4], .5) == 0.4
