"""One plain sentence per view, generated from the numbers on screen.

Each sentence carries the number, its uncertainty and its caveat, in words a reader can quote:
"When only the stated identity changes, GPT 5.4's English salary answers differ by 18.9 % on
average (95 % CI 18.8–19.0, published; the paper reports no noise floor)." Functions return
text (never draw), so tests can check them and pages decide where they go.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from explorer import vocab
from explorer.numbers import MISSING, finite, natural, num
from rupeebias_core.placebo import floor_too_thin

LANG_WORDS = {"all": "English and Hinglish", "en": "English", "hinglish": "Hinglish"}
TASK_WORDS = {
    "all": "", "salary_estimation": "salary", "salary_increment_estimation": "pay-rise",
    "counter_offer_recommendation": "counter-offer", "service_pricing_vendor": "freelance-price",
    "service_pricing_client": "client-budget"}


def ci(lo: object, hi: object, digits: int = 1) -> str:
    if finite(lo) and finite(hi):
        sep = " to " if min(float(lo), float(hi)) < 0 else "–"
        return f"95 % CI {num(lo, digits)}{sep}{num(hi, digits)}"
    return "no interval reported"


def scope_words(lang: str, task: str, axis: str) -> tuple[str, str]:
    """("the stated caste", "English salary") for the sentence."""
    what = "identity" if axis in ("all", "Mean") else axis.lower()
    if axis == "Urban/Rural":
        what = "urban or rural origin"
    task_w = TASK_WORDS.get(task, task)
    lang_w = LANG_WORDS.get(lang, lang)
    return f"the stated {what}", " ".join(w for w in (lang_w, task_w) if w)


def gap(label: str, value: object, lo: object, hi: object, *, lang: str, task: str, axis: str,
        published: bool, method: str = "upstream") -> str:
    """The sentence for one model's Mean Δ%; a computed model's interval under the authors'
    method is their pair bootstrap, and the sentence says it is too narrow."""
    who, kind = scope_words(lang, task, axis)
    if not finite(value):
        return (f"There is no number for {label} in this view ({kind} answers, "
                f"{vocab.AXIS_LABELS.get(axis, axis)}).")
    if published:
        tail = "published; the paper's intervals are too narrow and it reports no noise floor"
    elif method == "upstream":
        tail = "computed here; the authors' pair interval, too narrow"
    else:
        tail = "computed here, profile-cluster interval"
    return (f"When only {who} changes, {label}'s {kind} answers differ by {num(value)} % on "
            f"average ({ci(lo, hi)}, {tail}). This is a distance between answers: it does not "
            "say which identity gets less.")


def spread(values: pd.Series, names: pd.Series) -> str:
    """"Across the 9 paper models the gap runs from 8.1 % (A) to 32.4 % (B)."""
    ok = values.notna()
    if ok.sum() < 2:
        return ""
    v, n = values[ok].astype(float), names[ok]
    lo_i, hi_i = v.idxmin(), v.idxmax()
    return (f"Across the {int(ok.sum())} paper models it runs from {num(v[lo_i])} % "
            f"({n[lo_i]}) to {num(v[hi_i])} % ({n[hi_i]}).")



def decomposition(label: str, row: pd.Series | None, *, lang: str, task: str, axis: str,
                  lead: bool = True, flagged: int = 0) -> str:
    """The computed-model sentence from ``gap_decomposition``: the gap, how much of it is
    systematic and the excess over the placebo floor. ``flagged``: identities of this cell
    that the per-identity test flags (BH), shown beside it — the joint test over all
    identities can miss 5 % while one identity stands out, and the sentence must not read as
    contradicting the flag."""
    who, kind = scope_words(lang, task, axis)
    if row is None:  # the table exists (callers handle a missing one): no pairs in this cell
        return (f"{label} has no usable answer pairs in this cell, so there is no gap to split "
                "into a consistent part and noise.")
    if str(row.get("flag") or "") in ("upstream_markup_gaps", "includes_upstream_markup_gaps"):
        return (f"Under the authors' method {label}'s counter-offer 'gaps' are differences of "
                "markups, not distances between answers; choose the corrected method.")
    md = row.get("mean_delta")
    if not finite(md):
        return f"There is no decomposition for {label} in this cell."
    text = (f"When only {who} changes, {label}'s {kind} answers differ by {num(md)} % "
            f"({ci(row.get('mean_delta_lo'), row.get('mean_delta_hi'))}, computed here, "
            "profile-cluster interval)." if lead else "")
    share = row.get("systematic_share")
    if finite(share) and float(share) > 1:
        # the identity effects alone imply a larger gap than observed: no share to give
        text += (f" The consistent identity effects alone would imply a gap of "
                 f"{num(row.get('systematic_delta'))} %, more than the observed one, so this "
                 "gap cannot be split into a consistent part and jitter here.")
    elif finite(share) and finite(row.get("p_value")) and float(row["p_value"]) >= 0.05:
        text += (" Taken together, the identities show no consistent effect at the 5 % level "
                 f"(permutation test over all of them, p = {float(row['p_value']):.2f}), so the "
                 f"estimate that {num(100 * float(share), 0)} % of the gap is systematic "
                 "cannot be told from noise.")
        if flagged:
            who_out = ("One identity stands out on its own test" if flagged == 1 else
                       f"{flagged} identities stand out on their own tests")
            text += (f" {who_out} above; a single identity's effect can be clear while the "
                     "effects of all of them together are not.")
    elif finite(share):
        text += (f" About {num(100 * float(share), 0)} % of that "
                 f"({ci(100 * float(row.get('systematic_share_lo', math.nan)), 100 * float(row.get('systematic_share_hi', math.nan)), 0)})"  # noqa: E501
                 " is a consistent identity effect; the rest is answer-to-answer jitter.")
    pl, ex = row.get("placebo_delta"), row.get("excess_delta")
    n_pl, cover = row.get("n_placebo_pairs"), row.get("placebo_coverage")
    if finite(pl) and finite(ex) and floor_too_thin(n_pl if finite(n_pl) else None,
                                                    cover if finite(cover) else None):
        text += (f" The placebo floor here rests on {int(float(n_pl or 0)):,} placebo pairs"
                 + (f" covering {100 * float(cover):.0f} % of the identity pairs"
                    if finite(cover) else "")
                 + ": too little to say whether identity moves answers more than an "
                   "irrelevant edit.")
    elif finite(pl) and finite(ex):
        interval = ci(row.get("excess_delta_lo"), row.get("excess_delta_hi"))
        lo = row.get("excess_delta_lo")
        text += (f" Swapping identity-free statements moves answers by {num(pl)} % "
                 f"({int(float(n_pl)):,} placebo pairs), so " if finite(n_pl) else
                 f" Swapping identity-free statements moves answers by {num(pl)} %, so ")
        if float(ex) >= 0:
            text += f"identity adds {num(ex)} points ({interval})"
            text += ("." if finite(lo) and float(lo) > 0 else
                     "; the interval includes zero, so this gap may be no bigger than an "
                     "irrelevant edit's.")
        else:
            text += (f"the identity gap is {num(-float(ex))} points smaller than that "
                     f"placebo gap ({interval}): no evidence that identity moves answers more "
                     "than an irrelevant edit does.")
    else:
        text += " No placebo floor was measured for this cell."
    return text


def effects(label: str, frame: pd.DataFrame, *, lang: str, task: str, axis: str) -> str:
    """Who gets least: among the identities with a test, the lowest signed effect, in % and in
    the task's unit, with its interval, which identities survive the BH correction, and the
    identities seen in one profile only (an effect, but no interval or test)."""
    _, kind = scope_words(lang, task, axis)
    where = f"{label}'s {kind} answers ({vocab.AXIS_LABELS.get(axis, axis)})"
    ok = frame[frame["effect_pct"].notna()] if len(frame) else frame
    if ok.empty:
        return f"No signed identity effects for {label} in this cell."
    has_p = "p_value" in ok
    tested = ok[ok["p_value"].notna()] if has_p else ok
    untested = ok[ok["p_value"].isna()] if has_p else ok.iloc[0:0]
    lone = ""
    if len(untested):
        far = untested.reindex(untested["effect_pct"].astype(float).abs().sort_values(
            ascending=False).index).head(3)
        names = ", ".join(f"{r.identifier_value} {num(r.effect_pct)} %"
                          for r in far.itertuples(index=False))
        lone = (f" {len(untested)} {'identity was' if len(untested) == 1 else 'identities were'}"
                f" seen in one profile only ({names}{', …' if len(untested) > 3 else ''}): "
                "no interval or test, since one profile's jitter cannot be told from an effect.")
    if tested.empty:
        return f"In {where}, no identity was seen in more than one profile.{lone}"
    low = tested.loc[tested["effect_pct"].astype(float).idxmin()]
    high = tested.loc[tested["effect_pct"].astype(float).idxmax()]
    among = f"of the {len(tested)} identities with a test, " if len(untested) else ""
    if float(high["effect_pct"]) - float(low["effect_pct"]) < 0.05:
        return (f"In {where}, {among}no identity gets more or less than another: every "
                "effect is 0.0 % — usually because almost no usable answers are left to "
                f"compare (see the missing answers below).{lone}")
    flagged = (tested[tested["significant"].fillna(False).astype(bool)]
               if "significant" in tested else tested.iloc[0:0])
    money = ""
    if finite(low.get("effect_natural")) and str(low.get("unit") or ""):
        money = (f"; at a typical answer, that is "
                 f"{natural(low.get('effect_natural'), str(low.get('unit')))}")
    excludes = finite(low.get("effect_pct_hi")) and float(low["effect_pct_hi"]) < 0
    if len(flagged):
        names = ", ".join(str(v) for v in flagged["identifier_value"].head(4))
        verdict = (f"{len(flagged)} of {len(tested)} identities "
                   f"{'differs' if len(flagged) == 1 else 'differ'} from the axis average after "
                   "the BH correction for testing every identity of every axis here ("
                   f"{names}{', …' if len(flagged) > 4 else ''})")
    elif excludes:
        verdict = ("its interval excludes zero, but after correcting for testing every "
                   "identity of every axis here (BH) no identity is flagged, so treat it as a "
                   "lead, not a finding")
    else:
        verdict = ("no identity differs from the axis average after the BH correction, so "
                   "this may be noise")
    return (f"In {where}, {among}{low['identifier_value']} gets the least: "
            f"{num(low['effect_pct'])} % against the average identity "
            f"({ci(low.get('effect_pct_lo'), low.get('effect_pct_hi'))} %){money}; "
            f"{high['identifier_value']} gets the most ({num(high['effect_pct'], 1)} %). "
            f"{verdict[0].upper()}{verdict[1:]}.{lone}")


def _scope(lang: str, task: str) -> str:
    """"English salary answers" / "answers" for the identifier and pair-browser sentences."""
    words = " ".join(w for w in (LANG_WORDS.get(lang, lang) if lang != "all" else "",
                                 TASK_WORDS.get(task, task)) if w)
    return f"{words} answers" if words else "answers"


#: Below this share of answers with a usable number, a cell's figures rest on few answers and
#: the page says so beside them (the missing answers may be the finding).
THIN_USABLE_SHARE = 0.5


def thin_data(label: str, n_usable: int, n_answers: int, what: str,
              answers: str = "answers here") -> str | None:
    """The thin-data warning for one model's cell, or None when enough answers were usable.
    ``what``: the figures and their verb ("its deviations rest"); ``answers``: which answers
    ("English answers here")."""
    if not _thin(n_usable, n_answers):
        return None
    return (f"**Thin data:** only {_share(n_usable, n_answers)} % of {label}'s {answers} had a "
            f"usable number ({n_usable:,} of {n_answers:,}): {what} on those alone, and the "
            "missing answers themselves may be the finding.")


def thin_data_cells(label: str, cells: Sequence[tuple[str, int, int]], what: str,
                    answers: str = "answers here") -> str | None:
    """One model's thin-data warning over several use cases shown together (a radar, a dot plot
    of every use case), or None when none is thin. ``cells``: (use-case label, usable answers,
    answers); ``what`` as in :func:`thin_data`, read for the thin use cases ("its gaps there
    rest")."""
    thin = [(task, u, n) for task, u, n in cells if _thin(u, n)]
    if not thin:
        return None
    if len(thin) == 1:
        (task, u, n), = thin
        return thin_data(label, u, n, what, answers.replace("answers", f"{task} answers", 1))
    listed = "; ".join(f"{task} {_share(u, n)} % ({u:,} of {n:,})" for task, u, n in thin)
    return (f"**Thin data:** few of {label}'s {answers} had a usable number in {len(thin)} use "
            f"cases — {listed}: {what} on those alone, and the missing answers themselves may "
            "be the finding.")


def _thin(n_usable: int, n_answers: int) -> bool:
    return n_answers > 0 and n_usable < THIN_USABLE_SHARE * n_answers


def _share(n_usable: int, n_answers: int) -> str:
    """Usable share in %, with a second decimal below 0.1 % so that 1 of 4,698 is not "0.0"."""
    pct = 100 * n_usable / n_answers
    return f"{pct:.1f}" if pct >= 0.1 or pct == 0 else f"{pct:.2f}"


def deviation(label: str, frame: pd.DataFrame, *, lang: str, task: str) -> str:
    """The identity furthest from its axis average, for one model (``Identifier``, ``Axis``,
    ``Deviation %``, ``n rows``). This descriptive view has no interval: the sentence says so."""
    ok = frame[frame["Deviation %"].notna()] if len(frame) else frame
    if ok.empty:
        return f"There is no identifier deviation for {label} in this view."
    solid = ok[deviation_enough(ok)]
    if solid.empty:
        return (f"No identity of {label}'s here rests on {MIN_SENTENCE_ANSWERS} or more "
                f"answers, so none is worth a sentence; the {len(ok):,} shown are in the "
                "table, with their counts.")
    far = solid.loc[solid["Deviation %"].astype(float).abs().idxmax()]
    v = float(far["Deviation %"])
    side = "above" if v >= 0 else "below"
    n_axis = int((ok["Axis"] == far["Axis"]).sum())
    n = far.get("n rows")
    behind = f", from {int(float(n)):,} answers" if finite(n) else ""
    scope = _scope("all" if lang == "all" else lang, task)
    return (f"In {label}'s {scope}, {far['Identifier']} sits furthest from its axis average: "
            f"{num(abs(v))} % {side} the average of the {n_axis} "
            f"{vocab.AXIS_LABELS.get(str(far['Axis']), far['Axis'])} identities (computed "
            f"here{behind}). This view has no interval, so a small deviation may be noise; the "
            "canonical pairs tab tests chosen contrasts with intervals."
            + _left_out(len(ok) - len(solid), THIN_DEVIATION, "identity", "identities"))


#: Above this ratio of two averages the sentence says "more than N times", not a percentage
#: with eight digits that only says one average is close to zero.
MAX_RATIO_WORDS = 100
#: Fewest matched slots (same profile and wording, both identities answered) a canonical gap
#: needs before a sentence names it and its chart cell is drawn at full strength: with fewer,
#: one or two answers set the number (SmolLM2's 200 % "gap" between one Tier 1 city answer
#: and one Village answer).
MIN_SENTENCE_SLOTS = 10
#: Fewest answers per identity of the axis, on average, a maximum observed gap needs for the
#: same.
MIN_SENTENCE_ANSWERS = 10
#: The cells below those counts, in a sentence ...
THIN_CANONICAL = f"fewer than {MIN_SENTENCE_SLOTS} matched prompts"
THIN_MAX_GAP = f"fewer than {MIN_SENTENCE_ANSWERS} answers per identity"
#: ... and in a chart's *Basis* legend and column (short: a phone's legend starts under the
#: plot, and the long form ran past the box).
BASIS_ENOUGH = "enough answers"
BASIS_THIN_CANONICAL = f"< {MIN_SENTENCE_SLOTS} matched prompts"
BASIS_THIN_MAX_GAP = f"< {MIN_SENTENCE_ANSWERS} answers per identity"
THIN_DEVIATION = f"fewer than {MIN_SENTENCE_ANSWERS} answers"
BASIS_THIN_DEVIATION = f"< {MIN_SENTENCE_ANSWERS} answers"


def deviation_enough(frame: pd.DataFrame) -> pd.Series:
    """Per row: whether an identifier's deviation rests on :data:`MIN_SENTENCE_ANSWERS`
    answers (``n rows``)."""
    return _at_least(frame, "n rows", MIN_SENTENCE_ANSWERS)


def _at_least(frame: pd.DataFrame, column: str, need: object) -> pd.Series:
    """Per row: ``column`` >= ``need`` (a number or a per-row Series); every row when the
    column is absent (a frame that carries no counts is not judged)."""
    counts = frame.get(column)
    if counts is None:
        return pd.Series(True, index=frame.index)
    return pd.to_numeric(counts, errors="coerce").fillna(0) >= need


def basis(enough: pd.Series, thin: str) -> pd.Series:
    """The *Basis* column of a chart that draws thin cells faint: :data:`BASIS_ENOUGH` or
    ``thin`` per row."""
    return enough.map({True: BASIS_ENOUGH, False: thin})


def canonical_enough(frame: pd.DataFrame) -> pd.Series:
    """Per row: whether a canonical gap rests on :data:`MIN_SENTENCE_SLOTS` matched slots."""
    return _at_least(frame, "n matched slots", MIN_SENTENCE_SLOTS)


def max_gap_enough(frame: pd.DataFrame) -> pd.Series:
    """Per row: whether a maximum observed gap rests on :data:`MIN_SENTENCE_ANSWERS` answers
    per identity of its axis (``n rows``, ``Axis``)."""
    need = (frame["Axis"].map(lambda a: MIN_SENTENCE_ANSWERS * len(vocab.identifiers_of(a)))
            if "n rows" in frame.columns else 0)  # no counts: not judged (see _at_least)
    return _at_least(frame, "n rows", need)


def above(gap_pct: object) -> str:
    """How much higher the larger of two averages is than the smaller, in words, from their
    relative gap (difference ÷ their average, as CPG and MOG): a gap of 54 % means the larger
    is 1.74 times the smaller, "74 % above" — not "54 % more"."""
    if not finite(gap_pct):
        return MISSING
    g = abs(float(gap_pct))
    if g >= 200:  # one average is zero or of the other sign: no ratio
        return "far above"
    ratio = (200 + g) / (200 - g)
    if ratio > MAX_RATIO_WORDS:  # "26,315,689.5 % above": an average near zero, not a rate
        return f"more than {MAX_RATIO_WORDS} times"
    return f"{num(ratio * 100 - 100)} % above"


def _left_out(n: int, what: str, one: str = "cell", many: str = "cells") -> str:
    if not n:
        return ""
    rest = f"{one} rests" if n == 1 else f"{many} rest"
    return f" {n:,} {rest} on {what} and {'is' if n == 1 else 'are'} left out here."


def canonical(frame: pd.DataFrame) -> str:
    """The largest canonical pair gap on screen (``Model``, ``Use case``, ``Pair``, ``CPG %``,
    ``CI low``, ``CI high``, ``n matched slots``) among cells with at least
    :data:`MIN_SENTENCE_SLOTS` matched slots, with its interval and whether the interval
    excludes 0."""
    ok = frame[frame["CPG %"].notna()] if len(frame) else frame
    if ok.empty:
        return "There is no canonical pair gap in this view."
    solid = ok[canonical_enough(ok)]
    if solid.empty:
        return (f"No canonical gap here rests on {MIN_SENTENCE_SLOTS} or more matched prompts "
                "(the same profile and wording answered for both identities), so none is "
                f"worth a sentence; the {len(ok):,} shown are in the table, with their counts.")
    top = solid.loc[solid["CPG %"].astype(float).abs().idxmax()]
    v = float(top["CPG %"])
    first, _, second = str(top["Pair"]).partition(" vs ")
    more, less = (first, second) if v >= 0 else (second, first)
    lo, hi = top.get("CI low"), top.get("CI high")
    if finite(lo) and finite(hi):
        verdict = ("the interval excludes zero" if float(lo) > 0 or float(hi) < 0 else
                   "the interval includes zero, so it may be noise")
    else:
        verdict = "there is no interval, so it may be noise"
    n = top.get("n matched slots")
    basis = f"{int(float(n)):,} matched prompts, " if finite(n) else ""
    return (f"The largest canonical gap here is {top['Model'].rsplit(vocab.LANE_SEP, 1)[0]}'s "
            f"{top['Use case'].lower()} answers: {more}'s average answer is {above(v)} "
            f"{less}'s (a gap of {num(v)} % of their average, {ci(lo, hi)}, {basis}"
            f"computed here; {verdict}). English and Hinglish are pooled."
            + _left_out(len(ok) - len(solid), THIN_CANONICAL))


def max_gap(frame: pd.DataFrame) -> str:
    """The largest maximum observed gap on screen (``Gap %``, ``n rows``, ``Axis``, …) among
    cells with at least :data:`MIN_SENTENCE_ANSWERS` answers per identity, naming both
    identities, with its interval and the caveat that the maximum of many comparisons runs
    high."""
    ok = frame[frame["Gap %"].notna()] if len(frame) else frame
    if ok.empty:
        return "There is no maximum observed gap in this view."
    solid = ok[max_gap_enough(ok)]
    if solid.empty:
        return (f"No gap here rests on {MIN_SENTENCE_ANSWERS} or more answers per identity, so "
                f"none is worth a sentence; the {len(ok):,} shown are in the table, with their "
                "counts.")
    top = solid.loc[solid["Gap %"].astype(float).idxmax()]
    return (f"The widest gap here is {top['Model'].rsplit(vocab.LANE_SEP, 1)[0]}'s "
            f"{top['Use case'].lower()} answers on {top['Axis']}: {top['Highest']}'s average "
            f"answer is {above(top['Gap %'])} {top['Lowest']}'s (a gap of {num(top['Gap %'])} % "
            f"of their average, {ci(top.get('CI low'), top.get('CI high'))}, computed here). "
            "It is the largest of all pairs on the axis, picked after looking, so it overstates "
            "a typical gap." + _above_its_interval(top)
            + _left_out(len(ok) - len(solid), THIN_MAX_GAP))


def _above_its_interval(top: pd.Series) -> str:
    """What an interval wholly above its own gap means (Methodology, maximum observed gap):
    resampled, every identity's average moves and the largest gap is picked again, so the
    replicates run above the gap when the averages' noise is about as large as the gap."""
    lo = top.get("CI low")
    if not (finite(lo) and float(lo) > float(top["Gap %"])):
        return ""
    return (" Its interval lies wholly above the gap itself, which happens when the noise in "
            "each identity's average is about as large as the gap: it cannot confirm the gap.")


def slot(label: str, summary: Mapping[str, object], *, lang: str, task: str, axis: str,
         n_identities: int) -> str:
    """The pair browser's sentence: one slot's mean gap, its interval and what a slot is."""
    scope = _scope(lang, task)
    if not finite(summary.get("mean")):
        return (f"{label}'s {scope} in this slot leave fewer than two readable answers, so no "
                "gap can be computed; another profile or wording may have them.")
    n = summary.get("n")
    pairs = f"{int(float(n)):,} pairs" if finite(n) else "its pairs"
    return (f"In this one slot, {label}'s {scope} for any two of the {n_identities} "
            f"{vocab.AXIS_LABELS.get(axis, axis)} identities differ by {num(summary['mean'])} % "
            f"on average ({ci(summary.get('lo'), summary.get('hi'))}, "
            f"computed here from {pairs}). A slot is one profile and one wording, so this shows "
            "how the model's numbers arise, not its overall gap (see Overview), and it does not "
            "say which identity gets less.")
