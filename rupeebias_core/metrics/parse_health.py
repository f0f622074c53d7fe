"""Parse health and refusal rate (paper Table 22, upstream ``table_23_parse_health.csv``).

Computed on *raw* baseline rows (no deduplication, no DeepSeek reasoning filter), as upstream:
parse health = rows with a number / rows; refusal rate = rows flagged as refusals / rows. The
upstream method counts the authors' extractor and refusal detector; the corrected method counts
usable ``parse()`` results and its refusal flag. ``strict_rate`` is the share of answers in the
exact required format (the authors' runner validator), the same under both methods.
"""

from __future__ import annotations

import pandas as pd

ALL = "all"


def parse_health_rows(raw: pd.DataFrame, model: str) -> pd.DataFrame:
    """``raw`` has one row per standard-condition response with boolean ``parsed``,
    ``refusal``, ``strict`` and ``task``/``language``. Rows per (task, language), per task, per
    language and overall."""
    out = []
    for by_task, by_lang in ((True, True), (True, False), (False, True), (False, False)):
        keys = (["task"] if by_task else []) + (["language"] if by_lang else [])
        grouped = raw.groupby(keys, sort=True) if keys else [((), raw)]
        for key, g in grouped:
            key = key if isinstance(key, tuple) else (key,)
            labels = dict(zip(keys, key, strict=True))
            n = len(g)
            if n == 0:
                continue
            n_parsed, n_ref, n_strict = (int(g[c].sum()) for c in ("parsed", "refusal", "strict"))
            out.append({"model": model, "language": labels.get("language", ALL),
                        "task": labels.get("task", ALL), "n_rows": n,
                        "parse_health": 100.0 * n_parsed / n,
                        "refusal_rate": 100.0 * n_ref / n,
                        "strict_rate": 100.0 * n_strict / n,
                        "n_parsed": n_parsed, "n_refusals": n_ref, "n_strict": n_strict})
    return pd.DataFrame(out)
