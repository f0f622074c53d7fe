"""Page state ↔ URL query parameters, so a link reproduces the view.

Pattern: before a page draws its widgets, :meth:`PageState.seed` puts a value for each widget
key into ``st.session_state`` — from the URL the first time (validated against an allow-list),
afterwards whatever the reader chose. Widgets are then created with ``key=`` and no default.
After the widgets, :meth:`PageState.sync` writes the non-default values back to the URL.

Why not Streamlit 1.67's ``bind="query-params"``: it stores the *display label* in the URL
(``?model=Claude+Opus+4.7``), so links would break when a label is reworded, and it can't encode
values whose options depend on the data. Here URLs carry stable slugs (``?model=gpt-5.4``).

Encoding: one key per parameter; lists are repeated keys (``?model=a&model=b``), which survives
commas and slashes inside values (``Urban/Rural``); a comma-separated single value is accepted
too. ``?model=`` (present but empty) means an explicitly empty selection. Anything not on the
allow-list — unknown keys, unknown values, over-long values, control characters — is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

MAX_VALUE_LENGTH = 120
MAX_VALUES = 64


@dataclass(frozen=True)
class Param:
    """One URL-bound widget: its URL key, allowed values and default.

    ``explicit``: the value is written to the URL even when it is the default. For defaults
    chosen from the data (the model a page opens on): a link that left them implicit would
    show another view once the data changed, and a link must reproduce the view it was
    copied from."""

    key: str
    options: tuple[str, ...]
    default: str | tuple[str, ...]
    multi: bool = False
    explicit: bool = False

    def __post_init__(self) -> None:
        if self.multi:
            if not isinstance(self.default, tuple):
                raise TypeError(f"{self.key}: a multi param needs a tuple default")
        elif self.options and self.default not in self.options:
            raise ValueError(f"{self.key}: default {self.default!r} is not an option")


def clean(raw: object) -> str | None:
    """A URL value if it is a plausible string, else None (never raises)."""
    if not isinstance(raw, str) or len(raw) > MAX_VALUE_LENGTH:
        return None
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in raw):
        return None
    return raw


def parse(param: Param, raw_values: Sequence[object]) -> str | tuple[str, ...]:
    """The value a list of raw URL strings asks for, or the default when none is valid."""
    values = [v for v in (clean(r) for r in list(raw_values)[:MAX_VALUES]) if v is not None]
    allowed = set(param.options)
    if not param.multi:
        for value in values:
            if value in allowed:
                return value
        return param.default
    if values == [""]:
        return ()
    picked: list[str] = []
    for value in values:
        parts = [value] if value in allowed else value.split(",")
        picked += [p for p in parts if p in allowed and p not in picked]
    if not picked:
        return param.default
    return tuple(o for o in param.options if o in picked)


def encode(param: Param, value: str | Sequence[str]) -> list[str] | str | None:
    """The URL form of a value (None when it equals the default and can stay implicit, which
    an ``explicit`` param never does)."""
    if param.multi:
        chosen = tuple(value)
        if (not param.explicit and set(chosen) == set(param.default)
                and len(chosen) == len(param.default)):
            return None
        return list(chosen) if chosen else ""
    return None if value == param.default and not param.explicit else str(value)


class PageState:
    """The URL-bound widgets of one page."""

    def __init__(self, page: str, params: Sequence[Param]) -> None:
        self.page = page
        self.params: dict[str, Param] = {p.key: p for p in params}

    def key(self, name: str) -> str:
        """The session-state / widget key for one parameter of this page."""
        return f"{self.page}.{name}"

    def seed(self) -> None:
        """Give every widget a valid value before it is drawn: URL on first sight, else kept."""
        url = _url_values()
        self._rejected = self._find_rejected(url)
        for name, param in self.params.items():
            wkey = self.key(name)
            if wkey in st.session_state and _valid(param, st.session_state[wkey]):
                continue
            value = parse(param, url.get(name, []))
            st.session_state[wkey] = list(value) if param.multi else value

    def value(self, name: str) -> str | tuple[str, ...]:
        param = self.params[name]
        current = st.session_state.get(self.key(name), param.default)
        return tuple(current) if param.multi else str(current)

    def set(self, name: str, value: str | Sequence[str]) -> None:
        """Set a widget's value from a callback (presets); validated like a URL value."""
        param = self.params[name]
        raw = list(value) if param.multi and not isinstance(value, str) else [value]
        parsed = parse(param, raw if raw else [""])
        st.session_state[self.key(name)] = list(parsed) if param.multi else parsed

    def rejected(self) -> list[str]:
        """Names of URL parameters this page ignored when it was seeded (unknown key or no
        valid value). Names only: values may be hostile and are never echoed back."""
        return list(getattr(self, "_rejected", []))

    def _find_rejected(self, url: Mapping[str, Sequence[str]]) -> list[str]:
        out = []
        for name, raw in url.items():
            param = self.params.get(name)
            shown = name if clean(name) is not None and name.isidentifier() else "(unnamed)"
            if param is None:
                out.append(shown)
                continue
            values = [v for v in (clean(r) for r in raw) if v is not None]
            if param.multi and values == [""]:
                continue
            parts = [p for v in values for p in ([v] + (v.split(",") if param.multi else []))]
            if not any(p in param.options for p in parts):
                out.append(shown)
        return out

    def sync(self) -> None:
        """Write this page's non-default values to the URL (and drop every other key)."""
        wanted: dict[str, list[str] | str] = {}
        for name, param in self.params.items():
            encoded = encode(param, self.value(name))
            if encoded is not None:
                wanted[name] = encoded
        if _url_values() != {k: (v if isinstance(v, list) else [v]) for k, v in wanted.items()}:
            st.query_params.from_dict(wanted)

    def link(self) -> str:
        """The query string that reproduces the current view (for a copyable permalink)."""
        from urllib.parse import urlencode

        pairs: list[tuple[str, str]] = []
        for name, param in self.params.items():
            encoded = encode(param, self.value(name))
            if encoded is None:
                continue
            for v in encoded if isinstance(encoded, list) else [encoded]:
                pairs.append((name, v))
        return ("?" + urlencode(pairs)) if pairs else ""


def _url_values() -> dict[str, list[str]]:
    try:
        return {k: list(st.query_params.get_all(k)) for k in st.query_params.keys()}
    except Exception:  # noqa: BLE001 - a malformed URL must never crash a page
        return {}


def _valid(param: Param, value: object) -> bool:
    if param.multi:
        return isinstance(value, list | tuple) and all(v in param.options for v in value)
    return isinstance(value, str) and value in param.options
