"""Rate limiting of the *Try a prompt* page (public mode).

A token bucket per *client* shared by all its sessions (:class:`ClientBuckets`), a process-wide
one (:class:`SharedBucket`), and :class:`RetryCharge`, which charges every retry to both as it
happens, so an upstream never receives more requests than the limits allow.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

# --------------------------------------------------------------------------------------------
# Rate limiting
# --------------------------------------------------------------------------------------------


@dataclass
class TokenBucket:
    """Classic token bucket: ``capacity`` requests, refilled at ``per_minute`` per minute.

    Plain data (picklable) so it can live in ``st.session_state``; one session's script runs
    in one thread at a time. The process-wide bucket is wrapped in :class:`SharedBucket`."""

    capacity: float
    per_minute: float
    tokens: float
    updated: float

    @classmethod
    def full(cls, per_minute: int, now: float | None = None) -> TokenBucket:
        now = time.monotonic() if now is None else now
        return cls(float(per_minute), float(per_minute), float(per_minute), now)

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self.updated)
        self.tokens = min(self.capacity, self.tokens + elapsed * self.per_minute / 60.0)
        self.updated = now

    def available(self, now: float | None = None) -> float:
        self._refill(time.monotonic() if now is None else now)
        return self.tokens

    def take(self, n: int, now: float | None = None) -> float:
        """Take ``n`` tokens; 0.0 on success, else seconds until ``n`` will be available
        (``inf`` when ``n`` exceeds the capacity). Nothing is taken on failure."""
        self._refill(time.monotonic() if now is None else now)
        if n > self.capacity:
            return math.inf
        if self.tokens >= n:
            self.tokens -= n
            return 0.0
        return (n - self.tokens) * 60.0 / self.per_minute

    def give_back(self, n: int) -> None:
        self.tokens = min(self.capacity, self.tokens + n)


class SharedBucket:
    """A thread-safe bucket shared by every session of the app process."""

    def __init__(self, per_minute: int) -> None:
        self._bucket = TokenBucket.full(per_minute)
        self._lock = threading.Lock()

    def take(self, n: int, now: float | None = None) -> float:
        with self._lock:
            return self._bucket.take(n, now)

    def give_back(self, n: int) -> None:
        with self._lock:
            self._bucket.give_back(n)


def session_bucket(state: MutableMapping[str, Any], key: str, per_minute: int,
                   now: float | None = None) -> TokenBucket:
    """The session's bucket, (re)created when missing or when the configured rate changed.

    Not a limit on its own: every new session starts full. Public mode keys its limit on the
    client with :class:`ClientBuckets`."""
    bucket = state.get(key)
    if not isinstance(bucket, TokenBucket) or bucket.per_minute != float(per_minute):
        bucket = TokenBucket.full(per_minute, now)
        state[key] = bucket
    return bucket


#: Client key of visitors whose address is unknown: loopback (Streamlit reports None for it),
#: or no client context. They share one bucket, which is the strict side to err on.
UNKNOWN_CLIENT = "unknown-client"
MAX_CLIENTS = 10_000


def client_key(ip_address: str | None, headers: Mapping[str, str] | None = None,
               header_name: str | None = None) -> str:
    """The key a visitor's rate limit is charged to: the proxy header you named (its last
    value, the one your own proxy appended), else the WebSocket peer address Streamlit exposes
    as ``st.context.ip_address``, else :data:`UNKNOWN_CLIENT`. IPv6 addresses count per /64
    (one host usually holds the whole prefix)."""
    import ipaddress

    raw: str | None = None
    if header_name and headers:
        value = next((v for k, v in headers.items() if k.lower() == header_name.lower()), None)
        if value:
            raw = value.split(",")[-1].strip()
    if not raw:
        raw = ip_address
    if not raw:
        return UNKNOWN_CLIENT
    try:
        addr = ipaddress.ip_address(raw.strip().strip("[]"))
    except ValueError:
        return UNKNOWN_CLIENT
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.ip_network(f"{addr}/64", strict=False))
    return str(addr)


class ClientBuckets:
    """One token bucket per client key, shared by every session of the app process.

    Why not per session: a new session (a reload, a new tab, a script) starts with a full
    bucket, so 40 fresh sessions got 126 requests against a limit of 20. Thread-safe (Streamlit
    runs each session's script in its own thread). Bounded: past ``max_clients`` keys, buckets
    that have refilled completely are dropped first (they equal a new one); only if none has,
    the least recently used one goes."""

    def __init__(self, per_minute: int, max_clients: int = MAX_CLIENTS) -> None:
        self.per_minute = per_minute
        self.max_clients = max_clients
        self._buckets: dict[str, TokenBucket] = {}
        self._lock = threading.Lock()

    def _get(self, key: str, now: float) -> TokenBucket:
        bucket = self._buckets.pop(key, None)
        if bucket is None:
            if len(self._buckets) >= self.max_clients:
                self._evict(now)
            bucket = TokenBucket.full(self.per_minute, now)
        self._buckets[key] = bucket  # re-inserted: dict order is least recently used first
        return bucket

    def _evict(self, now: float) -> None:
        full = [k for k, b in self._buckets.items() if b.available(now) >= b.capacity]
        for k in full[: max(1, len(self._buckets) - self.max_clients + 1)]:
            del self._buckets[k]
        while len(self._buckets) >= self.max_clients:
            del self._buckets[next(iter(self._buckets))]

    def take(self, key: str, n: int, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        with self._lock:
            return self._get(key, now).take(n, now)

    def give_back(self, key: str, n: int) -> None:
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is not None:
                bucket.give_back(n)

    def available(self, key: str, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        with self._lock:
            bucket = self._buckets.get(key)
            return bucket.available(now) if bucket is not None else float(self.per_minute)

    def __len__(self) -> int:
        return len(self._buckets)


class RetryCharge:
    """The `may_retry` hook of :func:`precompute.client.complete` for one run: every retry
    takes one token from the client's bucket and one from the global bucket (both, or none),
    so a failing upstream receives no more requests than the limits allow."""

    def __init__(self, clients: ClientBuckets | None, key: str,
                 global_bucket: SharedBucket | None) -> None:
        self.clients, self.key, self.global_bucket = clients, key, global_bucket
        self.charged = 0
        self.refused = 0

    def __call__(self) -> bool:
        if self.clients is not None and self.clients.take(self.key, 1) != 0.0:
            self.refused += 1
            return False
        if self.global_bucket is not None and self.global_bucket.take(1) != 0.0:
            if self.clients is not None:
                self.clients.give_back(self.key, 1)
            self.refused += 1
            return False
        self.charged += 1
        return True
