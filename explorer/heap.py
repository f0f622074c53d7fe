"""Short full garbage collections on a long-running explorer server (issue 17 item 9).

Why: a warm server holds 150,000–190,000 container objects from its imports (Streamlit,
pandas, DuckDB, Altair) and caches. Python's full collection walks all of them: measured at
90–200 ms, in whichever script run crosses the collector's threshold (about one warm page load
in 30), holding the GIL while that reader's page waits. Objects moved to the permanent
generation (:func:`gc.freeze`) are skipped by every later collection: the same full
collections took 8–14 ms (docs/explorer.md, Speed, session 35).
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_settled: set[str] = set()


def settle(page: str) -> bool:
    """After ``page``'s first complete run in this process: collect, then freeze what is left
    (imported modules, caches), so later full collections skip it.

    Once per page, because each page imports its own libraries; freezing only then keeps what
    can never be collected bounded (a cycle that is alive at a freeze and dies later stays in
    memory). The price is one full collection (0.1–0.2 s) in each page's first run after a
    start, which is slow anyway. Returns whether this call froze."""
    with _lock:  # script runs of different sessions run in different threads
        if page in _settled:
            return False
        _settled.add(page)
    gc.collect()
    gc.freeze()
    return True
