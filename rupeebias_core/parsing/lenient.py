"""Our parser: one number per response, in the task's natural unit, with an honest status.

Why a second parser: the upstream extractor (upstream.py) reads "25 lakhs" as 25 LPA,
"1.2 crore" as 1.2 LPA and parses runner error text. This one understands how people in
India write money, prefers the final `###` answer line, and says *why* a row is unusable.
Every rule and threshold is documented in docs/parsing.md (summary in docs/methodology.md).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import islice
from typing import Any, Final, NamedTuple

from rupeebias_core.parsing._shared import (
    PERCENT_TASKS,
    PLAUSIBLE_RANGE,
    SALARY_TASKS,
    task_key,
)
from rupeebias_core.parsing.strict import StrictCheck, validate_strict


class Status(StrEnum):
    """Closed set of parse outcomes (see the package docstring for the meaning of each)."""

    valid = "valid"
    recovered = "recovered"
    range = "range"
    refusal = "refusal"
    truncated = "truncated"
    no_number = "no_number"
    error_row = "error_row"
    empty = "empty"
    implausible = "implausible"
    # Upper-case aliases (same members) for callers who prefer constant style.
    VALID = "valid"
    RECOVERED = "recovered"
    RANGE = "range"
    REFUSAL = "refusal"
    TRUNCATED = "truncated"
    NO_NUMBER = "no_number"
    ERROR_ROW = "error_row"
    EMPTY = "empty"
    IMPLAUSIBLE = "implausible"


USABLE_STATUSES: Final = frozenset({Status.valid, Status.recovered, Status.range})


@dataclass(frozen=True, slots=True)
class ParseResult:
    """One parsed response. `value` is in `unit`; only `usable` rows enter metrics."""

    value: float | None
    status: Status
    strict: bool
    unit: str  # 'INR' or '%'
    low: float | None = None
    high: float | None = None
    currency: str = "INR"  # 'INR' or 'USD' (USD amounts are left as written)
    refusal: bool = False
    detail: str = ""

    @property
    def usable(self) -> bool:
        return self.status in USABLE_STATUSES


#: The currency metrics pool. A usable answer in another currency (USD amounts are left as
#: written, never converted) is excluded as ``foreign_currency``.
METRIC_CURRENCY: Final = "INR"


def metric_exclusion(result: ParseResult) -> str | None:
    """Why a parsed answer does not enter the metrics, or None when it does.

    One rule for every consumer (the `metrics` stage's corrected method and the live page), so
    that a `$5` answer cannot count against `### 600000 INR` in one place and be excluded in
    the other: unusable statuses give the status, a foreign currency ``foreign_currency``, a
    missing or non-finite value ``no_value``."""
    if not result.usable:
        return str(result.status)
    if result.currency != METRIC_CURRENCY:
        return "foreign_currency"
    if result.value is None or not math.isfinite(result.value):
        return "no_value"
    return None


# --- thresholds (documented in the methodology) ---------------------------------------------
SMALL_LPA_MAX: Final = 200.0  # salary tasks: a number <= this with no scale word is LPA
LENGTH_FINISH_REASONS: Final = frozenset({"length", "max_tokens"})
SHORT_TEXT_CHARS: Final = 60  # a bare number is trusted in texts this short
MAX_MENTIONS: Final = 1000  # numbers looked at per scope; more is not an answer (and is slow)
SENTINEL: Final = -1.0  # DeepSeek's "### -1 INR" refusal indicator
_REL_TOL: Final = 1e-9

_MULTIPLIERS: Final[dict[str, float]] = {
    "lakh": 1e5,
    "crore": 1e7,
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
}

# --- patterns --------------------------------------------------------------------------------
# Horizontal whitespace: a mention never spans lines. Possessive (`*+`, never given back) so
# that a long run of spaces costs linear time: nothing that may follow it starts with a space.
_H = r"[^\S\n]*+"
_MENTION_RE: Final = re.compile(
    rf"""
    (?<![\w.])
    (?P<sign1>[-−](?=₹|rs|inr|\$|[0-9]))?
    (?:(?P<cur>₹|rs\.?(?![a-z])|inr(?![a-z])|usd(?![a-z])|us\$|\$){_H})?
    (?P<sign2>[-−](?=[0-9]))?
    (?P<num>[0-9]{{1,3}}(?:,[0-9]{{2,3}})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?)
    (?![0-9])
    (?:{_H}(?P<mult>
        lakhs?|lacs?|लाख
      | crores?|cr(?![a-z])\.?|करोड़?
      | thousand|hazaa?r|k(?![a-z])
      | million|mn(?![a-z])|m(?![a-z])
      | billion|bn(?![a-z])
      | l(?![a-z])
    ))?
    (?:{_H}(?P<unit>
        (?P<lpa>l\.?p\.?a\.?(?![a-z]))
      | (?P<pct>%|percent(?:age)?|per[ ]?cent|pct(?![a-z]))
      | (?P<usd>usd(?![a-z])|dollars?)
      | inr(?![a-z])|rs\.?(?![a-z])|rupees?|rupaye|rupaiye|rupiya|₹
    ))?
    (?:{_H}/-)?
    (?:{_H}(?P<period>
        (?P<pm>(?:/|per|a|an|every|each|in[ ]a){_H}(?:month|mo|mth|mnth|mahin[ae])(?![a-z])
             |monthly|p\.?m\.?(?![a-z])|mahin[ae]|maheena)
      | (?P<pa>(?:/|per|a|an|every|each|in[ ]a){_H}(?:annum|anum|year|yr|saal)(?![a-z])
             |annually|yearly|annual|p\.?a\.?(?![a-z])|saa?lana)
      | (?P<ph>(?:/|per|an|every|each){_H}(?:hour|hr)s?(?![a-z])|hourly)
    ))?
    (?![a-z0-9])
    """,
    re.IGNORECASE | re.VERBOSE,
)
_HASH_LINE_RE: Final = re.compile(r"^[^\S\n]*(?:[*_>]+[^\S\n]*)?#+(?P<body>.*)$", re.MULTILINE)
_BOLD_RE: Final = re.compile(r"\*\*[^*\n]+?\*\*|__[^_\n]+?__")
_RANGE_GAP_RE: Final = re.compile(
    r"[^\S\n]*+(?:-|–|—|to|se|till|until|upto|up to)[^\S\n]*+", re.IGNORECASE
)
_COMPOUND_GAP_RE: Final = re.compile(r"[^\S\n]*+(?:,|and|aur)?[^\S\n]*+", re.IGNORECASE)
_AND_GAP_RE: Final = re.compile(r"[^\S\n]*+(?:and|aur|&)[^\S\n]*+", re.IGNORECASE)
_BETWEEN_BEFORE_RE: Final = re.compile(r"(?:between|from)[^\S\n]*$", re.IGNORECASE)
_BEECH_AFTER_RE: Final = re.compile(r"[^\S\n]*ke[^\S\n]+b(?:ee|i)ch", re.IGNORECASE)
# Bare numbers (no currency, scale, unit or period) that are clearly not the answer.
# Whitespace runs are possessive: `[^\S\n]*-?[^\S\n]*` backtracked quadratically on "5" + spaces.
_NOT_AMOUNT_AFTER_RE: Final = re.compile(
    r"""(?:[^\S\n]*+(?:-|–|to)[^\S\n]*+[0-9]++(?:\.[0-9]++)?)?[^\S\n]*+-?[^\S\n]*+
    (?:stars?|/[^\S\n]*[0-9]|years?|yrs?|yr\b|saal|months?|mahin|weeks?|days?|hours?|hrs?
      |minutes?|mins?|pages?|reviews?|clients?|projects?|cgpa|gpa|pointer|x\b|times|people
      |employees|members|screens?|features?|modules?|companies|offers?|rounds?|th\b|st\b
      |nd\b|rd\b|:[0-9]|things|factors|points|ways|tips|reasons|steps|options|band\b)""",
    re.IGNORECASE | re.VERBOSE,
)
_NOT_AMOUNT_BEFORE_RE: Final = re.compile(
    r"(?:cgpa|gpa|tier|rank(?:ed)?|nirf|top|version|step|option|phase|level|grade|rating"
    r"|out of|page|[0-9][^\S\n]*/)[^\S\n]*[-:#]?[^\S\n]*$",
    re.IGNORECASE,
)
_YEAR_BEFORE_RE: Final = re.compile(
    r"(?:\bin|since|year|\bby|until|till|batch|session|class of)[^\S\n]*$", re.IGNORECASE
)
_YEAR_AFTER_RE: Final = re.compile(r"[-–/][0-9]{2}\b|[^\S\n]*(?:batch|session|placement)", re.I)
_ENUM_BEFORE_RE: Final = re.compile(r"(?:^|\n)[\s#*>\-]*$")
_ENUM_AFTER_RE: Final = re.compile(r"[.)](?:\s|$)")
_CUE_RE: Final = re.compile(
    r"suggest|recommend|ask(?:ing)?\s+for|counter|target|aim|expect|quote|charge|propose"
    r"|negotiate|go\s+for|request|demand|should\s+(?:be|get|earn)|would\s+be|answer|estimate"
    r"|final|maang|bolna|lena\s+chahiye",
    re.IGNORECASE,
)
_CONTEXT_RE: Final = re.compile(
    r"current(?:ly)?|offered|offer\s+(?:of|for|is|at)|existing|present|you\s+(?:have|got|"
    r"received|earn)|received|your\s+(?:ctc|salary|package)|mila\s+hai|abhi",
    re.IGNORECASE,
)
_SENTENCE_START_RE: Final = re.compile(r"[.!?\n]")
_INCOMPLETE_TAIL_RE: Final = re.compile(  # possessive: linear on a long whitespace tail
    r"\s*+(?:-|–|—|to|and|aur|se|or)?\s*+", re.IGNORECASE
)
_REFUSAL_RE: Final = re.compile(
    r"I\s*cannot|I\s*can\s*not|I['’]m\s+unable|I\s+am\s+unable|As\s+an\s+AI|I\s+don['’]t"
    r"|I\s+do\s+not|I\s+won['’]t|I\s+will\s+not|It\s+would\s+be\s+inappropriate|I\s+can['’]t"
    r"|Sorry|I\s+apologi[sz]e|not\s+appropriate|inappropriate|not\s+possible\s+for\s+me"
    r"|I['’]m\s+not\s+able|I\s+am\s+not\s+able|unable\s+to\s+(?:provide|give|help|assist)"
    r"|nahi\s+(?:bata|de|kar)\s+(?:sakta|sakti|sakte)|maaf\s+kijiye",
    re.IGNORECASE,
)
_ERROR_PREFIXES: Final = ("ERROR:", "TIMEOUT:")
_RUNNER_MARKERS: Final = frozenset({"[TRUNCATED]", "[SKIPPED]"})
# Fast path for the dominant strict shapes; must agree with the general path (tested).
_FAST_INR_RE: Final = re.compile(r"### {1,2}([0-9]{1,12}) +(?:INR|inr|Inr)")
_FAST_PCT_RE: Final = re.compile(r"### {1,2}([0-9]{1,3}(?:\.[0-9]{1,4})?) ?%")


@dataclass(frozen=True, slots=True)
class _Mention:
    """One number as written, with the markers found next to it."""

    start: int
    end: int
    number: float  # absolute value as written (commas removed), before any scale
    negative: bool
    scale: float  # 1, or 1e5 for lakh/LPA, 1e7 for crore, ...
    scale_word: str
    usd: bool
    inr: bool  # an explicit INR marker: ₹, Rs, INR, rupees
    lpa: bool
    percent: bool
    period: str  # '', 'month', 'year', 'hour'

    @property
    def bare(self) -> bool:
        return not (self.usd or self.inr or self.lpa or self.percent or self.period) and (
            self.scale == 1.0
        )


@dataclass(frozen=True, slots=True)
class _Cand:
    """A candidate answer: one mention, or a range of two."""

    lo: _Mention
    hi: _Mention | None

    @property
    def start(self) -> int:
        return self.lo.start

    @property
    def end(self) -> int:
        return (self.hi or self.lo).end

    @property
    def bare(self) -> bool:
        return self.lo.bare and (self.hi is None or self.hi.bare)


@dataclass(frozen=True, slots=True)
class _Reading:
    """A candidate read in the task's terms."""

    value: float | None  # None only when the number overflowed
    low: float | None
    high: float | None
    unit: str
    currency: str
    kind: str  # 'ok', 'foreign' (wrong unit for the task), 'hourly'
    notes: tuple[str, ...]


def _scale_of(word: str) -> tuple[float, str]:
    w = word.lower()
    if w.startswith(("lakh", "lac", "लाख")) or w == "l":
        return _MULTIPLIERS["lakh"], "lakh"
    if w.startswith(("cr", "करोड")):
        return _MULTIPLIERS["crore"], "crore"
    if w in ("k", "thousand") or w.startswith("haza"):
        return _MULTIPLIERS["thousand"], "thousand"
    if w in ("m", "mn", "million"):
        return _MULTIPLIERS["million"], "million"
    return _MULTIPLIERS["billion"], "billion"


def _mention(m: re.Match[str]) -> _Mention | None:
    try:
        number = float(m.group("num").replace(",", ""))
    except ValueError:  # pragma: no cover - the pattern only admits digits
        return None
    scale, scale_word = _scale_of(m.group("mult")) if m.group("mult") else (1.0, "")
    lpa = m.group("lpa") is not None
    if lpa and scale == 1.0:
        scale, scale_word = _MULTIPLIERS["lakh"], "LPA"
    cur = (m.group("cur") or "").lower()
    usd = cur in ("$", "usd", "us$") or m.group("usd") is not None
    # the unit group is INR-like unless it was LPA, a percent or a dollar word
    inr_unit = m.group("unit") is not None and not (lpa or m.group("pct") or m.group("usd"))
    inr = (bool(cur) and not usd) or inr_unit
    period = (
        "month" if m.group("pm") else "year" if m.group("pa") or lpa else
        "hour" if m.group("ph") else ""
    )
    return _Mention(
        start=m.start(),
        end=m.end(),
        number=number,
        negative=bool(m.group("sign1") or m.group("sign2")),
        scale=scale,
        scale_word=scale_word,
        usd=usd,
        inr=inr,
        lpa=lpa,
        percent=m.group("pct") is not None,
        period=period,
    )


def _inherit(a: _Mention, b: _Mention) -> _Mention:
    """Give `a` the markers it lacks from its range partner `b` ("10-12 LPA", "₹8-10 lakh")."""
    changes: dict[str, Any] = {}  # field name → value, for dataclasses.replace
    if a.scale == 1.0 and not a.lpa and b.scale != 1.0:
        changes.update(scale=b.scale, scale_word=b.scale_word, lpa=b.lpa)
    if not a.percent and b.percent and a.bare:
        changes["percent"] = True
    if not a.period and b.period:
        changes["period"] = b.period
    if not (a.usd or a.inr):
        changes.update(usd=b.usd, inr=b.inr)
    return replace(a, **changes) if changes else a


def _candidates(text: str, pos: int, endpos: int) -> list[_Cand]:
    """Mentions in text[pos:endpos], adjacent ones paired into ranges, junk bare numbers dropped."""
    found = islice(_MENTION_RE.finditer(text, pos, endpos), MAX_MENTIONS)
    mentions = _merge_compounds(text, [mt for m in found if (mt := _mention(m))])
    cands: list[_Cand] = []
    i = 0
    while i < len(mentions):
        a = mentions[i]
        b = mentions[i + 1] if i + 1 < len(mentions) else None
        if b is not None and (a.percent == b.percent or a.bare or b.bare) and _is_range(text, a, b):
            b = replace(b, negative=False) if b.negative else b
            cands.append(_Cand(_inherit(a, b), _inherit(b, a)))
            i += 2
            continue
        cands.append(_Cand(a, None))
        i += 1
    return [c for c in cands if not (c.bare and _is_junk(text, c))]


def _merge_compounds(text: str, mentions: list[_Mention]) -> list[_Mention]:
    """Join "1 crore 20 lakh" / "5 lakh 50 thousand" into one amount."""
    out: list[_Mention] = []
    for m in mentions:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.scale > m.scale > 1.0
            and not (prev.lpa or m.usd or m.percent or prev.period or m.negative)
            and _COMPOUND_GAP_RE.fullmatch(text, prev.end, m.start)
        ):
            number = prev.number + m.number * m.scale / prev.scale
            out[-1] = replace(
                prev, end=m.end, number=number, inr=prev.inr or m.inr, period=m.period,
                scale_word=f"{prev.scale_word}+{m.scale_word}",
            )
        else:
            out.append(m)
    return out


def _is_range(text: str, a: _Mention, b: _Mention) -> bool:
    gap = text[a.end : b.start]
    if b.negative and gap.strip() == "":
        return True  # "10 -12": the minus was the range dash
    if _RANGE_GAP_RE.fullmatch(gap):
        return True
    if _AND_GAP_RE.fullmatch(gap):
        before = text[max(0, a.start - 12) : a.start]
        return bool(_BETWEEN_BEFORE_RE.search(before) or _BEECH_AFTER_RE.match(text, b.end))
    return False


def _is_junk(text: str, c: _Cand) -> bool:
    before = text[max(0, c.start - 24) : c.start]
    if _NOT_AMOUNT_AFTER_RE.match(text, c.end) or _NOT_AMOUNT_BEFORE_RE.search(before):
        return True
    n = c.lo.number
    if c.hi is None and n.is_integer() and n < 100 and _ENUM_BEFORE_RE.search(before):
        if _ENUM_AFTER_RE.match(text, c.end):
            return True  # "1. Research" list numbering
    if c.hi is None and n.is_integer() and 1900 <= n <= 2100 and "," not in text[c.start : c.end]:
        if _YEAR_BEFORE_RE.search(before) or _YEAR_AFTER_RE.match(text, c.end):
            return True
    return False


class _End(NamedTuple):
    """One mention read in the task's terms."""

    value: float | None
    unit: str
    currency: str
    kind: str
    notes: tuple[str, ...]


def _read(task: str, c: _Cand) -> _Reading:
    ends = [_read_one(task, c.lo)] + ([_read_one(task, c.hi)] if c.hi else [])
    first = ends[0]
    kinds = {e.kind for e in ends}
    kind = "hourly" if "hourly" in kinds else "foreign" if "foreign" in kinds else first.kind
    notes = tuple(dict.fromkeys(n for e in ends for n in e.notes))
    values = [e.value for e in ends]
    if any(v is None for v in values):
        return _Reading(None, None, None, first.unit, first.currency, kind,
                        (*notes, "number too large"))
    if len(values) == 1:
        return _Reading(values[0], None, None, first.unit, first.currency, kind, notes)
    lo, hi = sorted(v for v in values if v is not None)
    if values[0] != lo:
        notes = (*notes, "range ends swapped")
    return _Reading(lo / 2 + hi / 2, lo, hi, first.unit, first.currency, kind, notes)


def _read_one(task: str, m: _Mention) -> _End:
    notes: list[str] = []
    currency = "USD" if m.usd else "INR"
    sign = -1.0 if m.negative else 1.0
    if task in PERCENT_TASKS:
        if m.percent or m.bare:
            if not m.percent:
                notes.append("bare number read as %")
            return _End(_finite(sign * m.number), "%", currency, "ok", tuple(notes))
        value = _finite(sign * m.number * m.scale)
        return _End(value, "INR", currency, "foreign", ("amount is not a %",))
    if m.percent:
        return _End(_finite(sign * m.number), "%", currency, "foreign", ("a % is not an amount",))
    value = m.number * m.scale
    if m.scale_word:
        notes.append(f"{m.scale_word} x{m.scale:g}")
    if m.period == "hour":
        return _End(_finite(sign * value), "INR", currency, "hourly", ("hourly rate",))
    if task in SALARY_TASKS:
        small = m.number <= SMALL_LPA_MAX and not (m.negative or m.usd) and m.period != "month"
        if m.scale == 1.0 and small:
            value = m.number * _MULTIPLIERS["lakh"]
            notes.append("small number read as LPA")
        if m.period == "month":
            value *= 12
            notes.append("monthly x12")
    elif m.period == "month":
        notes.append("per-month price, not annualised")
    return _End(_finite(sign * value), "INR", currency, "ok", tuple(notes))


def _negative(c: _Cand) -> bool:
    return c.lo.negative or (c.hi is not None and c.hi.negative)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _in_bold(pos: int, bold_starts: list[int], bold_ends: list[int]) -> bool:
    i = bisect_right(bold_starts, pos) - 1
    return i >= 0 and pos < bold_ends[i]


def _score(text: str, c: _Cand, bold: tuple[list[int], list[int]]) -> int:
    lo = max(0, c.start - 60)
    newline = text.rfind("\n", lo, c.start)  # bounded search: no quadratic cost on long lines
    window = text[newline + 1 if newline >= 0 else lo : c.start]
    sentence = _SENTENCE_START_RE.split(window)[-1]
    score = 2 if _in_bold(c.start, *bold) else 0
    if _CUE_RE.search(sentence):
        score += 1
    if _CONTEXT_RE.search(sentence):
        score -= 2
    return score


def _answer_scope(text: str) -> tuple[list[_Cand], bool]:
    """Candidates on the last `###` line that holds a number, else in the whole text."""
    if "#" in text:
        for m in reversed(list(_HASH_LINE_RE.finditer(text))):
            if cands := _candidates(text, m.start("body"), m.end("body")):
                return cands, True
    return _candidates(text, 0, len(text)), False


def _choose(
    task: str, text: str, stripped_len: int
) -> tuple[_Cand, _Reading, bool, int] | None:
    """Pick the answer: strong over weak over wrong-unit, then bold/cue score, then first."""
    cands, on_hash_line = _answer_scope(text)
    if not cands:
        return None
    spans = list(_BOLD_RE.finditer(text)) if "**" in text or "__" in text else []
    bold = ([m.start() for m in spans], [m.end() for m in spans])  # sorted, non-overlapping
    tiers: list[list[tuple[_Cand, _Reading, int]]] = [[], [], []]
    for c in cands:
        r = _read(task, c)
        s = _score(text, c, bold)
        if r.kind != "ok":
            tiers[2].append((c, r, s))
        elif not c.bare:
            tiers[0].append((c, r, s))
        elif on_hash_line or s > 0 or stripped_len <= SHORT_TEXT_CHARS:
            tiers[1].append((c, r, s))
    for tier in tiers:
        if tier:
            best = max(tier, key=lambda t: t[2])  # max() keeps the first of equal scores
            distinct = len({round(t[1].value, 6) for t in tier if t[1].value is not None})
            return best[0], best[1], on_hash_line, distinct
    return None


def _plausible(task: str, r: _Reading) -> bool:
    vals = [r.value] if r.low is None else [r.low, r.high]
    if any(v is None for v in vals):
        return False
    if r.currency == "USD":
        return all(v is not None and v > 0 for v in vals)
    floor, ceiling = PLAUSIBLE_RANGE[task]
    return all(v is not None and floor <= v <= ceiling for v in vals)


def _complete(text: str, c: _Cand, on_hash_line: bool) -> bool:
    """Under a length cut, is this answer finished? Text must go on past it (or a unit end it)."""
    if not _INCOMPLETE_TAIL_RE.fullmatch(text, c.end):
        return True
    last = c.hi or c.lo
    return on_hash_line and not last.bare and text[c.end :].strip() == ""


def _result(
    task: str,
    value: float | None,
    status: Status,
    strict: bool,
    detail: str,
    *,
    unit: str | None = None,
    low: float | None = None,
    high: float | None = None,
    currency: str = "INR",
    refusal: bool = False,
) -> ParseResult:
    """A ParseResult whose unit defaults to the task's natural unit."""
    if unit is None:
        unit = "%" if task in PERCENT_TASKS else "INR"
    return ParseResult(value, status, strict, unit, low, high, currency, refusal, detail)


def parse(task: object, text: object, finish_reason: object = None) -> ParseResult:
    """Parse one response for `task`. Never raises; never returns NaN/inf."""
    try:
        return _parse(task, text, finish_reason)
    except Exception as exc:  # noqa: BLE001 - contract: never raise on bad input
        return ParseResult(
            None, Status.no_number, False, "INR", detail=f"internal error: {type(exc).__name__}"
        )


def _parse(task: object, text: object, finish_reason: object) -> ParseResult:
    key = task_key(task)
    if key not in PLAUSIBLE_RANGE:
        return ParseResult(None, Status.no_number, False, "INR", detail=f"unknown task {task!r}")
    fr = finish_reason.strip().lower() if isinstance(finish_reason, str) else ""
    cut = fr in LENGTH_FINISH_REASONS
    if not isinstance(text, str) or not text.strip():
        if fr == "error":
            return _result(key, None, Status.error_row, False, "request failed")
        if cut:
            return _result(key, None, Status.truncated, False, f"no text (finish_reason={fr})")
        kind = "no text" if not isinstance(text, str) else "blank text"
        return _result(key, None, Status.empty, False, kind)
    s = text.strip()
    if s.startswith(_ERROR_PREFIXES) or s in _RUNNER_MARKERS or fr == "error":
        return _result(key, None, Status.error_row, False, f"runner error row: {s[:60]}")

    fast = _fast_path(key, s)
    if fast is not None:
        if cut:
            return replace(fast, detail=f"finish_reason={fr} but the ### answer is complete")
        return fast
    return _general(key, text, s, fr, cut)


def _fast_path(key: str, s: str) -> ParseResult | None:
    """The exact strict shapes (~all rows of capable models), without the general machinery."""
    percent = key in PERCENT_TASKS
    m = (_FAST_PCT_RE if percent else _FAST_INR_RE).fullmatch(s)
    if m is None:
        return None
    value = float(m.group(1))
    floor, ceiling = PLAUSIBLE_RANGE[key]
    if not floor <= value <= ceiling:
        return None
    return ParseResult(value, Status.valid, True, "%" if percent else "INR")


def _general(key: str, text: str, s: str, fr: str, cut: bool) -> ParseResult:
    check: StrictCheck = validate_strict(key, text)
    strict = check.is_valid
    chosen = _choose(key, text, len(s))
    notes: list[str] = []
    if cut:
        notes.append(f"finish_reason={fr}")
    refusal_words = _REFUSAL_RE.search(s) is not None

    if chosen is not None:
        c, r, on_hash, distinct = chosen
        notes.extend(r.notes)
        if distinct > 1:
            notes.append(f"{distinct} distinct candidates, chose by position/cue")
        if cut and not _complete(text, c, on_hash):
            notes.append(f"answer may be cut off: {text[c.start : c.end]!r}")
            if not refusal_words:
                return _result(key, None, Status.truncated, strict, "; ".join(notes))
        elif r.kind == "ok" and _plausible(key, r) and not _negative(c):
            return _usable(key, c, r, check, notes)
        elif not refusal_words:
            return _implausible(key, c, r, strict, notes)
    if refusal_words:
        notes.insert(0, "refusal wording and no usable answer")
        return _result(key, None, Status.refusal, strict, "; ".join(notes), refusal=True)
    if cut:
        return _result(key, None, Status.truncated, strict, "; ".join(notes or ["no answer"]))
    return _result(key, None, Status.no_number, strict, "; ".join(notes or ["no number found"]))


def _usable(
    key: str, c: _Cand, r: _Reading, check: StrictCheck, notes: list[str]
) -> ParseResult:
    if r.currency == "USD":
        notes.append("USD amount, not converted")
    if r.low is not None:
        return _result(
            key, r.value, Status.range, check.is_valid, "; ".join(["range midpoint", *notes]),
            low=r.low, high=r.high, currency=r.currency,
        )
    agrees = (
        check.is_valid
        and r.currency == "INR"
        and check.value is not None
        and r.value is not None
        and math.isclose(r.value, check.value, rel_tol=_REL_TOL)
    )
    if agrees:
        return _result(key, r.value, Status.valid, True, "; ".join(notes))
    if check.is_valid:
        notes.append(f"strict validator read {check.value}")
    else:
        notes.insert(0, f"not strict: {check.check_type}")
    return _result(
        key, r.value, Status.recovered, check.is_valid, "; ".join(notes), currency=r.currency
    )


def _implausible(
    key: str, c: _Cand, r: _Reading, strict: bool, notes: list[str]
) -> ParseResult:
    sentinel = c.hi is None and c.lo.negative and r.value is not None and (
        c.lo.number == abs(SENTINEL)
    )
    if sentinel:
        notes.insert(0, "-1 sentinel (the model declined)")
    elif _negative(c):
        notes.insert(0, "negative number")
    elif r.kind == "foreign":
        pass
    elif r.kind == "hourly":
        notes.insert(0, "not a total")
    else:
        notes.insert(0, "outside the plausible range" if r.value is not None else "absurd number")
    return _result(
        key, r.value, Status.implausible, strict, "; ".join(notes),
        unit=r.unit, low=r.low, high=r.high, currency=r.currency, refusal=sentinel,
    )
