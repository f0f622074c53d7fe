"""Stable random seeds derived from a cell's identity.

Upstream seeded numpy with ``abs(hash(key)) % 2**31``; Python salts ``hash()`` per process, so
its confidence intervals change from run to run. We hash the same descriptive key strings with
SHA-256 instead, so every interval is reproducible across processes, machines and worker counts.
"""

from __future__ import annotations

import hashlib

import numpy as np


def seed_from_key(key: str) -> int:
    """The first 8 bytes (little-endian) of SHA-256 of ``key``, as an unsigned integer."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")


def rng_for(key: str) -> np.random.Generator:
    """A PCG64 generator seeded from ``key`` (e.g. ``"axis-md:gpt-5.4:Caste:en"``)."""
    return np.random.default_rng(seed_from_key(key))
