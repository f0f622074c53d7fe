"""Pair browser: one counterfactual slot — every identity's answer, every pair's gap, the prompt."""

from __future__ import annotations

import functools
from collections.abc import Callable

import altair as alt
import pandas as pd
import streamlit as st

from explorer import charts, data, filters, numbers, sentences, tables, ui, vocab
from explorer.state import PageState, Param
from rupeebias_core import benchmark as bm

PAGE = "pairs"
#: The unit of the number a gap uses (parsed ``metric_unit``), in words.
METRIC_UNITS = {"LPA": "₹ lakh a year", "markup %": "markup over the offer, %",
                "INR/year": "₹ a year", "INR": "₹", "%": "%"}
#: What the answers' parsed values are (their unit is in the Unit column).
ANSWERS = {"salary_estimation": "salary", "salary_increment_estimation": "hike",
           "counter_offer_recommendation": "counter-offer", "service_pricing_vendor": "price",
           "service_pricing_client": "price"}
SORTS = {"delta_desc": "Largest gap first", "delta_asc": "Smallest gap first",
         "a": "Identifier A (A–Z)"}
RAW_NOTE = ("Only models computed here have raw answers. The nine models in the paper are "
            "shown elsewhere from its published tables; their raw responses are not shipped. "
            "To browse them, import the authors' runs: `python -m precompute import-upstream "
            "PATH`, then `python -m precompute metrics --data data`.")


def profile_label(task: str) -> Callable[[str], str]:
    """A ``format_func`` naming the profile in words, not just its id."""
    return functools.partial(bm.profile_summary, task)


def not_collected(ps: PageState, model: str, task: str, lang: str, axis: str, cond: str,
                  label: str) -> None:
    """A slot the model has not answered (a partial run): say so, and offer the slots it has."""
    have = data.answered_slots(model, task, lang, axis, cond)
    if have.empty:
        st.info(f"{label} has no answers yet for this use case, language, axis and system "
                "prompt: its run is partial (see the note above). Try another combination.",
                icon=":material/hourglass_empty:")
        return
    first = have.iloc[0]
    names = [f"{r.profile_id} · {r.question_variant_id}" for r in have.itertuples()]
    st.info(f"{label} has not answered this slot yet: its run is partial. For this use case, "
            f"language, axis and system prompt it has answered {len(have)} slot(s) (profile · "
            f"wording): {', '.join(names[:12])}{' …' if len(names) > 12 else ''}.",
            icon=":material/hourglass_empty:")

    def jump() -> None:
        ps.set("profile", str(first.profile_id))
        ps.set("qv", str(first.question_variant_id))

    st.button(f"Open {names[0]}", on_click=jump, key=f"{PAGE}-jump")


ui.page_header(
    "Pair browser",
    "Pick one **slot** — a model, use case, language, base profile, question wording and "
    "axis. Every prompt in a slot is identical except for the identity it states, so any "
    "difference between the answers below comes from that identity alone.",
)
models = filters.load_models()
if models is None:
    st.stop()
raw_models = tuple(models.loc[models["has_raw"], "model"])
st.info(RAW_NOTE, icon=":material/info:")

opening = filters.most_readable(raw_models)
base = [
    # defaults chosen from the data always go in the URL (explicit), so links survive new data
    Param("model", raw_models or ("",), opening.model, explicit=bool(raw_models)),
    Param("task", vocab.TASKS, opening.task or vocab.TASKS[0],
          explicit=opening.task is not None),
    Param("lang", vocab.LANGUAGES, "en"),
    Param("axis", vocab.AXES, "Caste"),
    Param("cond", vocab.CONDITIONS, "standard"),
    Param("method", vocab.METHODS, "upstream"),
    Param("sort", tuple(SORTS), "delta_desc"),
]
PageState(PAGE, base).seed()
task = str(st.session_state[f"{PAGE}.task"])
axis = str(st.session_state[f"{PAGE}.axis"])
idents = vocab.identifiers_of(axis)
pair = vocab.CANONICAL_PAIRS[axis]
# the slot opens where the model's answers can be read (the first one was often unreadable)
opening_slot = filters.readable_slot(*(str(st.session_state[f"{PAGE}.{k}"])
                                       for k in ("model", "task", "lang", "axis", "cond")))
ps = PageState(PAGE, [
    *base,
    Param("profile", vocab.profile_ids(task),
          opening_slot[0] if opening_slot else vocab.profile_ids(task)[0],
          explicit=opening_slot is not None),
    Param("qv", vocab.question_variant_ids(task),
          opening_slot[1] if opening_slot else vocab.question_variant_ids(task)[0],
          explicit=opening_slot is not None),
    Param("ident", idents, pair[0]),
])
ps.seed()
if task not in vocab.FAIRNESS_TASKS and ps.value("cond") != "standard":
    ps.set("cond", "standard")

labels = dict(zip(models["model"], models["label"], strict=True))
lang_now = str(ps.value("lang"))
qv_text = {q.id: q.text for q in bm.question_variants(task, lang_now)}
c1, c2, c3 = st.columns(3)
c1.selectbox("Model", ps.params["model"].options, key=ps.key("model"),
             format_func=lambda m: labels.get(m, m) if m else "— no computed model —",
             help="Models with raw answers in this data directory.")
c1.selectbox("Use case", vocab.TASKS, key=ps.key("task"), format_func=vocab.TASK_LABELS.get)
c2.radio("Language", vocab.LANGUAGES, key=ps.key("lang"), format_func=vocab.LANGUAGE_LABELS.get,
         horizontal=True)
c2.selectbox("Base profile", ps.params["profile"].options, key=ps.key("profile"),
             format_func=profile_label(task))
c3.selectbox("Axis", vocab.AXES, key=ps.key("axis"))
c3.selectbox("Question wording", ps.params["qv"].options, key=ps.key("qv"),
             format_func=lambda q: f"{q} · {qv_text.get(q, '')}")
st.radio("Method", vocab.METHODS, key=ps.key("method"), horizontal=True,
         format_func=vocab.METHOD_LABELS.get, help=ui.column_help("method"))
if task in vocab.FAIRNESS_TASKS:
    st.radio("System prompt", vocab.CONDITIONS, key=ps.key("cond"), horizontal=True,
             format_func={"standard": "Standard",
                          "fairness": "With the fairness instruction (ablation)"}.get)
ps.sync()
filters.ignored_params_note(ps)

model = str(ps.value("model"))
lang, profile, qv = lang_now, str(ps.value("profile")), str(ps.value("qv"))
cond, method = str(ps.value("cond")), str(ps.value("method"))
ui.model_notes(models, (model,))
if (opening.task is not None and (model, task) == (opening.model, opening.task)
        and opening_slot == (profile, qv)):
    ui.explain(f"This page opens on {labels.get(model, model)} · {vocab.TASK_LABELS[task]}, "
               "the model and use case computed here with the most answers the corrected parser "
               f"could read ({opening.n_read:,} of {opening.n_answers:,}), and on its slot with "
               "the most readable answers. Elsewhere answers can be cut off or unreadable: the "
               "*Status* column says so for each one.")

with ui.guard("This slot"):
    if model:
        slot = data.slot_rows(model, task, lang, profile, qv, axis, cond, method)
        st.caption(f"Computed here · {labels.get(model, model)} · {len(slot)} identifiers · "
                   f"{vocab.METHOD_LABELS[method]}")
    else:
        # An unreadable answers file is not the same as no answers: say which it is.
        bad = next((t for t in ("responses", "parsed") if data.broken(t)), None)
        if bad is not None:
            ui.data_problem(data.DataUnavailable(bad, str(data.broken(bad))), "The raw answers")
            st.caption("Only the prompts are shown until the file is fixed.")
        else:
            st.warning("No model with raw answers is available, so only the prompts are shown.")
        slot = None
    collected = 0 if slot is None else int(slot["status"].notna().sum())
    if slot is not None and len(slot) and not collected:
        not_collected(ps, model, task, lang, axis, cond, labels.get(model, model))
    elif slot is not None and len(slot):
        answered = int(slot["metric_value"].notna().sum())
        found = slot["metric_unit"].dropna()
        metric_unit = METRIC_UNITS.get(str(found.iloc[0]), str(found.iloc[0])) if len(
            found) else numbers.MISSING
        st.subheader(f"Answers for the {len(slot)} {axis} identities")
        ui.explain(f"{collected} of {len(slot)} identities have an answer, {answered} with a "
                   f"number the {vocab.METHOD_LABELS[method].lower()} uses. *Parsed value* is "
                   f"the {ANSWERS[task]} the answer states, in its *Unit*; *Δ% value* is the "
                   f"number the gap uses ({metric_unit}) — the two methods read the same answer "
                   "differently (Methodology). A blank value means the answer could not be "
                   "read or is excluded by the method (see *Status*) or is not collected yet — "
                   "that identity forms no pair.")
        view = pd.DataFrame({
            "Identifier": slot["identifier_value"], "Parsed value": slot["value"],
            "Unit": slot["unit"].map({"INR": "₹", "%": "%"}).fillna(slot["unit"]).where(
                slot["value"].notna()),
            f"Δ% value · {metric_unit}": slot["metric_value"], "Status": slot["status"],
            "Exact format": slot["strict"].map({True: "yes", False: "no"}),
            "Finish reason": slot["finish_reason"], "Raw answer": slot["response"],
            "Prompt id": slot["id"]})
        chart_df = view.dropna(subset=[f"Δ% value · {metric_unit}"]).assign(
            Pair=lambda d: d["Identifier"].map(
                lambda v: "canonical pair" if v in pair else "other"))
        if len(chart_df):
            spec = charts.spec(
                charts.bars_ci, chart_df, x=f"Δ% value · {metric_unit}", lo="_", hi="_",
                y="Identifier", color="Pair", y_order=list(idents), x_title=metric_unit,
                color_scale=alt.Scale(domain=["canonical pair", "other"],
                                      range=["#D55E00", "#0072B2"]))
            ui.chart(spec, chart_df, f"slot values {model} {task} {lang} {profile} {qv} {axis}",
                     f"{PAGE}-values", alt_text="Bar chart of each identity's answer",
                     title=f"Each {axis} identity's answer in one slot ({metric_unit})",
                     subtitle=ui.scope(vocab.TASK_LABELS[task], vocab.LANGUAGE_LABELS[lang],
                                       f"profile {profile}", f"wording {qv}",
                                       "with the fairness instruction"
                                       if cond == "fairness" else ""),
                     source=f"Computed with RupeeBias Explorer from {len(chart_df):,} answers "
                            f"of {labels.get(model, model)}")
        ui.table(view, f"slot answers {model} {task} {lang} {profile} {qv} {axis}",
                 f"{PAGE}-answers")

        st.subheader("Every pair's gap (Δ%)")
        gaps = tables.pair_gaps(slot, method)  # type: ignore[arg-type]
        summary = tables.slot_summary(gaps, f"pair-browser:{model}:{task}:{lang}:{profile}:"
                                            f"{qv}:{axis}:{cond}")
        ui.sentence(sentences.slot(labels.get(model, model), summary, lang=lang, task=task,
                                   axis=axis, n_identities=len(slot)))
        m1, m2, m3 = st.columns(3)
        m1.metric("Mean Δ% in this slot", numbers.num(summary["mean"], 2),
                  help=ui.HELP["Mean Δ%"])
        m2.metric("95% CI", f"[{numbers.num(summary['lo'], 2)}, {numbers.num(summary['hi'], 2)}]",
                  help="Percentile bootstrap that resamples this slot's answers (2,000 "
                       "resamples). Every answer is in several pairs, so the pairs are not "
                       "independent; resampling pairs, as the paper does, would give a "
                       "narrower interval than the data support. No interval with fewer than "
                       "three readable answers.")
        m3.metric("Pairs", f"{summary['n']:,}", help=f"{summary['n_missing']} more pairs have "
                  "a missing value and form no pair in the metrics.")
        ui.explain(f"Δ% = |a − b| ÷ ((a + b)/2) × 100 for two answers a and b. "
                   f"{numbers.num(summary['v10'], 1)}% of this slot's pairs differ by more than "
                   "10% (V@10). Each Δ% is a single pair of answers, so it has no CI of its "
                   "own; the slot mean above has one.")
        sort = str(ps.value("sort"))
        st.selectbox("Sort pairs", tuple(SORTS), key=ps.key("sort"), format_func=SORTS.get)
        gaps = (tables.sort_frame(gaps, "Δ%", sort == "delta_desc") if sort != "a"
                else gaps.sort_values(["Identifier A", "Identifier B"]).reset_index(drop=True))
        ps.sync()
        ui.table(gaps, f"pair gaps {model} {task} {lang} {profile} {qv} {axis}",
                 f"{PAGE}-gaps", height=420)
    elif slot is not None:
        ui.no_rows("answers for this slot")

st.subheader("The exact prompt")
with ui.guard("The prompt text"):
    st.selectbox("Identity", idents, key=ps.key("ident"))
    ps.sync()
    ident = str(ps.value("ident"))
    if slot is None:
        slot = data.prompt_rows(task, lang, profile, qv, axis, cond)
    row = slot[slot["identifier_value"] == ident]
    if row.empty:
        ui.no_rows("prompt for this identity")
    else:
        rec = row.iloc[0]
        ui.explain("Sent exactly as below: a system message (the answer format) and a user "
                   "message. Only the identity phrase changes between the prompts of a slot.")
        st.markdown("**System message**")
        ui.verbatim(rec["system_prompt"] or "")
        st.markdown("**User message**")
        ui.verbatim(rec["prompt"] or "")
        if model and "response" in row.columns:
            st.markdown("**Raw answer**")
            if "status" in row.columns and pd.isna(rec["status"]):
                ui.verbatim("(not collected yet: the run has not reached this prompt)")
            else:
                ui.verbatim("(no answer)" if pd.isna(rec["response"]) else str(rec["response"]))

st.divider()
ui.permalink(ps.link())
