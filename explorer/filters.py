"""Filters most pages share — models, sources, method — drawn the same way on every page.

They live in the sidebar so each page's own controls (language, use case, axis) stay next to
its charts. All are URL-bound through :mod:`explorer.state`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import pandas as pd
import streamlit as st

from explorer import data, tables, ui, vocab
from explorer.state import PageState, Param

LANG_OPTIONS = (vocab.ALL, *vocab.LANGUAGES)
TASK_OPTIONS = (vocab.ALL, *vocab.TASKS)
AXIS_OPTIONS = (vocab.ALL, *vocab.AXES)


def model_param(models: pd.DataFrame, default: Sequence[str] | None = None) -> Param:
    options = tuple(models["model"])
    chosen = tuple(m for m in (default if default is not None else options) if m in options)
    return Param("model", options, chosen, multi=True)


def most_answered(candidates: Sequence[str]) -> str:
    """Of models with raw answers, the one that has answered the most prompts (a complete run
    before a partial one; ties keep the given order): the model a single-model page opens on,
    so that its default view has answers."""
    def answers(model: str) -> int:
        try:
            return int(data.raw_coverage(model)["n_rows"].sum())
        except data.DataUnavailable:
            return 0
    return max(candidates, key=answers) if candidates else ""


class Readable(NamedTuple):
    """A computed model and use case a single-model page can open on (see :func:`most_readable`)."""

    model: str
    task: str | None  # None: no parse-health table to choose by
    n_read: int  # answers the corrected parser read there
    n_answers: int


def most_readable(candidates: Sequence[str]) -> Readable:
    """Of models with raw answers, the (model, use case) with the most answers the corrected
    parser could read (parse health, both languages, standard prompts); ties keep the order of
    ``candidates`` and of the use cases.

    Why not the most answered model on a fixed use case: every bundled model's salary estimates
    are almost all unreadable (₹10-15k for a year's salary, or numbers echoed from the prompt),
    so a page opening there shows effects built from a handful of answers or from the authors'
    extractor reading CGPAs as salaries. Without a parse-health table: the most answered
    model, and no use case."""
    if not candidates:
        return Readable("", None, 0, 0)
    try:
        health = data.rows("parse_health", model=tuple(candidates), method="corrected",
                           language=vocab.ALL, source_kind="computed")
    except data.DataUnavailable:
        health = pd.DataFrame()
    need = {"model", "task", "n_parsed", "n_rows"}
    if health.empty or not need <= set(health.columns):
        return Readable(most_answered(candidates), None, 0, 0)
    health = health[health["task"].isin(vocab.TASKS) & health["n_parsed"].notna()]
    if health.empty:
        return Readable(most_answered(candidates), None, 0, 0)
    rank = {m: n for n, m in enumerate(candidates)}
    task_rank = {t: n for n, t in enumerate(vocab.TASKS)}
    best = health.assign(_m=health["model"].map(rank), _t=health["task"].map(task_rank),
                         _n=-health["n_parsed"].astype(float)
                         ).sort_values(["_n", "_m", "_t"], kind="mergesort").iloc[0]
    return Readable(str(best["model"]), str(best["task"]), int(best["n_parsed"]),
                    int(best["n_rows"]))


def readable_slot(model: str, task: str, lang: str, axis: str, cond: str
                  ) -> tuple[str, str] | None:
    """The slot (profile, question wording) of this model, use case, language, axis and system
    prompt with the most answers the parser could read, ties in benchmark order; None when the
    model has answered none there (or it cannot be told).

    Why: the first slot in benchmark order is where a page used to open, and for the bundled
    models' salary estimates its answers are cut off or unreadable, so the authors' extractor
    read the CGPA in the prompt as a salary and the page opened on a "71.7 %" gap built from
    it."""
    if not model:
        return None
    try:
        have = data.answered_slots(model, task, lang, axis, cond)
    except (data.DataUnavailable, ValueError):
        return None
    if have.empty:
        return None
    profiles = {p: n for n, p in enumerate(vocab.profile_ids(task))}
    qvs = {q: n for n, q in enumerate(vocab.question_variant_ids(task))}
    best = have.assign(_r=-have["n_readable"].astype(int), _a=-have["n_answers"].astype(int),
                       _p=have["profile_id"].map(profiles), _q=have["question_variant_id"].map(qvs)
                       ).sort_values(["_r", "_a", "_p", "_q"], kind="mergesort").iloc[0]
    return str(best["profile_id"]), str(best["question_variant_id"])


def falls_back_to_corrected(frame: pd.DataFrame, method: str, derive: bool = False) -> bool:
    """Whether a view of ``frame`` under ``method`` shows the corrected method's rows instead:
    under the authors' method some of its rows are counter-offer markups (not distances, so
    never drawn as gaps), and this data has corrected rows to show in their place, said on the
    page. ``derive``: see :func:`tables.markup_flags`."""
    return (method == "upstream" and len(frame) > 0
            and bool(tables.markup_flags(frame, derive).any())
            and "corrected" in methods_available())


def source_param() -> Param:
    return Param("source", vocab.SOURCE_KINDS, vocab.SOURCE_KINDS, multi=True)


def method_param() -> Param:
    return Param("method", vocab.METHODS, "upstream")


def common_params(models: pd.DataFrame, default_models: Sequence[str] | None = None
                  ) -> list[Param]:
    return [model_param(models, default_models), source_param(), method_param()]


def methods_available() -> tuple[str, ...]:
    """Methods present in the computed delta table (always includes upstream)."""
    try:
        found = set(data.distinct("delta", "method"))
    except data.DataUnavailable:
        found = set()
    return tuple(m for m in vocab.METHODS if m in found | {"upstream"})


def draw_common(ps: PageState, models: pd.DataFrame) -> None:
    """Sidebar: model subset, which sources, which method (only when there is a choice)."""
    labels = dict(zip(models["model"], models["label"], strict=True))
    with st.sidebar:
        st.markdown("**Filters**")
        st.multiselect(
            "Models", list(ps.params["model"].options), key=ps.key("model"),
            format_func=lambda m: labels.get(m, m),
            help="Pick a subset to compare. Published = the paper's nine models; computed = "
                 "models whose raw answers were scored by this project.")
        st.pills("Show numbers that are", list(vocab.SOURCE_KINDS), selection_mode="multi",
                 key=ps.key("source"), format_func=lambda k: vocab.SOURCE_LABELS[k],
                 help=ui.column_help("source"))
        methods = methods_available()
        if len(methods) > 1:
            st.radio("Method", list(vocab.METHODS), key=ps.key("method"),
                     format_func=lambda m: vocab.METHOD_LABELS[m], help=ui.column_help("method"))
        else:
            st.caption("Method: the authors' (upstream) method — the only one in this data.")


def selected(ps: PageState) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """(models, source kinds, method) as chosen; published rows only exist for 'upstream'."""
    models = tuple(ps.value("model"))
    kinds = tuple(ps.value("source"))
    method = str(ps.value("method"))
    return models, kinds, method


def kinds_for_method(kinds: Sequence[str], method: str) -> tuple[str, ...]:
    """Published figures use the authors' method: under 'corrected' only computed rows apply."""
    if method != "upstream" and "published" in kinds:
        st.caption("Published figures use the authors' method, so they are not shown under the "
                   "corrected method. Switch Method to upstream to compare with the paper.")
        return tuple(k for k in kinds if k != "published")
    return tuple(kinds)


class Chosen(NamedTuple):
    """What the visitor chose, resolved: models, the source kinds that apply to the method,
    the method, and every model's display label."""

    models: tuple[str, ...]
    kinds: tuple[str, ...]
    method: str
    labels: dict[str, str]


def settle(ps: PageState, models: pd.DataFrame) -> Chosen:
    """After a page's widgets: write the URL, name ignored link parameters, resolve the choice
    and show the caveats that travel with the chosen models (the same on every results page)."""
    ps.sync()
    ignored_params_note(ps)
    sel_models, kinds, method = selected(ps)
    kinds = kinds_for_method(kinds, method)
    ui.model_notes(models, sel_models)
    return Chosen(sel_models, kinds, method,
                  dict(zip(models["model"], models["label"], strict=True)))


def ignored_params_note(ps: PageState) -> None:
    rejected = ps.rejected()
    if rejected:
        st.caption("Ignored link parameter(s): " + ", ".join(f"`{n}`" for n in
                                                              dict.fromkeys(rejected)))


def load_models() -> pd.DataFrame | None:
    """The model table, or a message and None when there is no data at all."""
    try:
        models = data.available_models()
    except data.DataUnavailable as exc:
        ui.data_problem(exc, "The model list")
        return None
    if models.empty:
        st.warning("No result tables were found in the data directory "
                   f"(`{data.data_dir()}`). Build them with `python -m precompute published` "
                   "and `python -m precompute metrics --data data`.", icon=":material/folder_off:")
        return None
    return models
