"""Who gets less, and by how much: signed identity effects in % and rupees, with missing
answers beside them (computed models only; docs/methodology.md §4.11)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import charts, data, filters, numbers, sentences, ui, vocab
from explorer.state import PageState, Param

PAGE = "who"
FLAGGED = "flagged (BH p < 0.05)"
NOT_FLAGGED = "not flagged"
UNTESTED = "no test (one profile)"

ui.page_header(
    "Who gets less, and by how much",
    "For one model, one use case, one language and one axis: by what percentage — and by how "
    "many rupees — each identity's answers sit above (+) or below (−) the average identity of "
    "its axis, on prompts that are otherwise identical. Beside it, how often each identity got "
    "a refusal or an answer with no usable number: a missing answer is an outcome too.",
)
st.info("**The paper's nine models are not on this page.** The paper's tables report only "
        "unsigned gaps (Mean Δ%: how far apart answers are); its signed figures (canonical "
        "pairs, deviations from the axis average) are not transcribed here, and none of it "
        "gives rupee amounts, intervals per identity or a test across identities. Answering "
        "that needs each model's raw answers, which the paper does not publish. Only models "
        "whose answers were scored here appear below.",
        icon=":material/info:")
ui.jargon("CI", "BH", "systematic", "placebo")

models = filters.load_models()
if models is None:
    st.stop()
try:
    have = set(data.distinct("identity_effects", "model"))
except data.DataUnavailable as exc:
    ui.data_problem(exc, "Signed identity effects")
    st.stop()
computed = [m for m in models["model"] if m in have]
if not computed:
    if data.broken("identity_effects"):
        ui.data_problem(data.DataUnavailable("identity_effects",
                                             data.broken("identity_effects") or ""),
                        "Signed identity effects")
    else:
        st.info("**Signed identity effects are not computed in this deployment yet.** They come "
                "from the raw answers of models computed here; once the metric tables are "
                "rebuilt (`python -m precompute metrics --data data`) this page fills in.",
                icon=":material/hourglass_empty:")
    st.stop()
opening = filters.most_readable(computed)
labels = dict(zip(models["model"], models["label"], strict=True))
# model and use case default to the data's most readable cell, so they always go in the URL
ps = PageState(PAGE, [
    Param("model", tuple(computed), opening.model, explicit=True),
    Param("method", vocab.METHODS, "upstream"),
    Param("lang", filters.LANG_OPTIONS, "en"),
    Param("task", filters.TASK_OPTIONS, opening.task or "salary_estimation",
          explicit=True),
    Param("axis", vocab.AXES, "Caste"),
])
ps.seed()
# two rows: in one, the model's and the method's names were cut short at 1440 px
c1, c2 = st.columns([1.3, 1.0])
c3, c4, c5 = st.columns([1.0, 1.5, 1.0])
c1.selectbox("Model (computed here)", list(computed), key=ps.key("model"),
             format_func=lambda m: labels.get(m, m))
c2.selectbox("Method", vocab.METHODS, key=ps.key("method"),
             format_func=vocab.METHOD_LABELS.get, help=ui.column_help("method"))
c3.selectbox("Language", filters.LANG_OPTIONS, key=ps.key("lang"),
             format_func=ui.label_func({"all": "Both pooled", **vocab.LANGUAGE_LABELS}))
c4.selectbox("Use case", filters.TASK_OPTIONS, key=ps.key("task"),
             format_func=ui.label_func(vocab.TASK_LABELS))
c5.selectbox("Axis", vocab.AXES, key=ps.key("axis"))
ps.sync()
filters.ignored_params_note(ps)
model, method = str(ps.value("model")), str(ps.value("method"))
lang, task, axis = str(ps.value("lang")), str(ps.value("task")), str(ps.value("axis"))
label = labels.get(model, model)
ui.model_notes(models, [model])
if opening.task is not None and (model, task) == (opening.model, opening.task):
    ui.explain(f"This page opens on {labels.get(opening.model, opening.model)} · "
               f"{vocab.TASK_LABELS[opening.task]}: of the models computed here, the model and "
               "use case with the most answers the corrected parser could read "
               f"({opening.n_read:,} of {opening.n_answers:,}). Other use cases can rest on "
               "far fewer readable answers; the *Unusable rate %* column and the note below the "
               "table say so.")
no_markups = method == "upstream" and task == vocab.ALL
task_label = (f"{vocab.TASK_LABELS[task]} except counter-offer" if no_markups
              else vocab.TASK_LABELS[task])
scope = (f"{label} · {task_label} · {vocab.LANGUAGE_LABELS.get(lang, 'Both')} · "
         f"{axis} · {vocab.METHOD_LABELS[method]}")
if no_markups:
    ui.explain("Under the authors' method counter-offer answers are compared as markups, which "
               "are not amounts, so *All use cases* on this page leaves counter-offer out (the "
               "Overview blanks that pooled cell instead). The corrected method includes it.")

eff = pd.DataFrame()
with ui.guard("Signed identity effects"):
    eff = data.rows("identity_effects", model=model, method=method, language=lang, task=task,
                    axis=axis)
    miss = pd.DataFrame()
    with ui.guard("Missing answers by identity"):
        miss = data.rows("missingness", model=model, method=method, language=lang, task=task,
                         axis=axis)
    if eff.empty:
        ui.no_rows("identity effects (no usable answer pairs of this model in this cell)")
    else:
        order = {v: i for i, v in enumerate(vocab.identifiers_of(axis))}
        eff = eff.assign(_o=eff["identifier_value"].map(order)).sort_values("_o").drop(
            columns="_o")
        ui.sentence(sentences.effects(label, eff, lang=lang, task=task, axis=axis))
        unit = str(eff["unit"].dropna().iloc[0]) if "unit" in eff and eff["unit"].notna().any() \
            else ""
        rupees = unit == "LPA" or unit.startswith("INR")
        # the header names the unit: rupees, or percentage points for the % answers
        amount = "Effect in ₹" if rupees else f"Effect in {unit or 'the task unit'}"
        amount_ci = "₹ CI" if rupees else f"{unit or 'Unit'} CI"
        sig = eff.get("significant", pd.Series(False, index=eff.index)).fillna(False)
        frame = pd.DataFrame({
            "Identifier": eff["identifier_value"],
            "Effect %": eff["effect_pct"], "CI low": eff.get("effect_pct_lo"),
            "CI high": eff.get("effect_pct_hi"),
            amount: [numbers.natural(v, unit) for v in eff.get(
                "effect_natural", pd.Series(float("nan"), index=eff.index))],
            amount_ci: [f"{numbers.natural(a, unit)} to {numbers.natural(b, unit)}"
                         if pd.notna(a) and pd.notna(b) else numbers.MISSING
                         for a, b in zip(eff.get("effect_natural_lo", eff["effect_pct"] * float(
                             "nan")), eff.get("effect_natural_hi", eff["effect_pct"] * float(
                                 "nan")), strict=True)],
            "BH flag": [FLAGGED if s else UNTESTED if pd.isna(p) else NOT_FLAGGED
                        for s, p in zip(sig.astype(bool), eff.get(
                            "p_value", pd.Series(0.0, index=eff.index)), strict=True)],
            "p (BH)": eff.get("p_bh"), "n slots": eff.get("n_slots"),
            "n profiles": eff.get("n_clusters")})
        if len(miss):
            per = miss[miss["identifier_value"] != vocab.ALL]
            frame = frame.merge(pd.DataFrame({
                "Identifier": per["identifier_value"],
                "Refusal rate %": 100 * per["refusal_rate"].astype(float),
                "Unusable rate %": 100 * per["unusable_rate"].astype(float),
                "n answers": per["n"]}), on="Identifier", how="left")
        spec = charts.spec(
            charts.ci_dots, frame, x="Effect %", lo="CI low", hi="CI high", y="Identifier",
            color="BH flag", y_order=list(frame["Identifier"]),
            x_title="% above (+) or below (−) the average identity",
            color_scale=charts.flag_scale(FLAGGED, NOT_FLAGGED, UNTESTED), zero_line=True,
            tooltip=(amount, "p (BH)"))
        typical = eff["typical_answer"] if "typical_answer" in eff else pd.Series(dtype=float)
        no_amount = bool(unit) and eff["effect_natural"].isna().all() and typical.notna().any()
        unit_words = ("" if no_amount else
                      {"LPA": "Money is in rupees a year (the model answered in lakh per "
                              "annum)", "INR/year": "Money is in rupees a year",
                       "INR": "Money is in rupees",
                       "pp": "The effect is in percentage points of the answer (a hike of 10 % "
                             "that is 8 % for one identity: −2 pp)"}
                      .get(unit, f"The effect is in {unit or 'the task unit'}")
                      + ", at the block's typical answer.")
        ui.explain("Dots: the identity's effect with its 95 % interval (profiles resampled). "
                   "Vermillion = still below 5 % after the Benjamini–Hochberg correction for "
                   "testing every identity of every axis of this language and use case; grey = "
                   "could be noise; light grey = seen in one profile only, so no interval and "
                   "no test. The test compares each effect with its own spread across profiles "
                   "(a studentized permutation test), so an interval that misses zero is "
                   "usually flagged unless the correction for many identities outweighs it. "
                   + unit_words
                   + (" Under the authors' method counter-offer effects are in points of "
                      "markup." if "markup" in unit else ""))
        if no_amount:
            ui.explain(f"**No amount in {unit} here:** the block's typical answer "
                       f"({numbers.num(float(typical.dropna().iloc[0]), 0)} {unit}) is not a "
                       "plausible answer for this use case, so the effect is given in % only."
                       + (" Under the authors' method a reply of “### 15000 INR” is read as "
                          "15,000 lakh a year (their rule keeps amounts below ₹1 lakh as LPA)."
                          if unit == "LPA" else ""))
        note = charts.clip_note(charts.ci_limits(frame, "Effect %", "CI low", "CI high",
                                                 signed=True), frame, "Effect %",
                                ("CI low", "CI high"))
        if note:
            ui.explain(note)
        ui.chart(spec, frame, f"who gets less {model} {method} {task} {lang} {axis}", f"{PAGE}-eff",
                 alt_text="Signed identity effects with 95% intervals",
                 title=f"Who gets less: {axis}", subtitle=scope,
                 source=f"Computed with RupeeBias Explorer from {int(eff['n_slots'].max()):,} "
                        f"matched slots of {label}" if "n_slots" in eff else "")
        ui.table(frame, f"who gets less {model} {method} {task} {lang} {axis}",
                 f"{PAGE}-eff-table")

    if len(miss):
        block = miss[miss["identifier_value"] == vocab.ALL]
        if len(block):
            b = block.iloc[0]
            p_ref = b.get("p_refusal_bh")
            thin = sentences.thin_data(
                label, int(b["n"]) - int(b["n_unusable"]), int(b["n"]),
                "the effects above rest" if len(eff) else "any effect would rest",
                "answers in this cell")
            if thin:
                st.warning(thin, icon=":material/warning:")
            ui.sentence(
                f"{100 * float(b['refusal_rate']):.1f} % of {label}'s answers here were refusals "
                f"and {100 * float(b['unusable_rate']):.1f} % had no usable number. "
                + ("Whether an answer is refused depends on the identity (BH p = "
                   f"{float(p_ref):.3f})." if pd.notna(p_ref) and float(p_ref) < 0.05 else
                   "There is no evidence that refusals depend on the identity"
                   + (f" (BH p = {float(p_ref):.2f})." if pd.notna(p_ref) else "."))
                + (" Filling every missing answer with a value inside its slot's observed "
                   f"range gives a Mean Δ% from {float(b['mean_delta_fill_lo']):.1f} % to "
                   f"{float(b['mean_delta_fill_hi']):.1f} % (a sensitivity range, not a bound: "
                   "fills outside the observed answers could move it further)."
                   if pd.notna(b.get("mean_delta_fill_lo")) and pd.notna(b.get(
                       "mean_delta_fill_hi")) else ""))

st.subheader("How much of the gap is more than noise?")
with ui.guard("The gap decomposition"):
    dec = data.rows("gap_decomposition", model=model, method=method, language=lang, task=task,
                    axis=(axis, vocab.ALL))
    dec = dec[dec["mean_delta"].notna()]  # a row without pairs has nothing to split or show
    cell = dec[dec["axis"] == axis]
    n_flagged = (int(eff["significant"].fillna(False).astype(bool).sum())
                 if "significant" in eff else 0)
    ui.sentence(sentences.decomposition(label, cell.iloc[0] if len(cell) else None, lang=lang,
                                        task=task, axis=axis, flagged=n_flagged))
    if len(dec):
        cols = [c for c in ("axis", "mean_delta", "mean_delta_lo", "mean_delta_hi",
                            "systematic_delta", "systematic_share", "systematic_share_lo",
                            "systematic_share_hi", "p_value", "placebo_delta", "excess_delta",
                            "excess_delta_lo", "excess_delta_hi", "n_pairs", "n_clusters",
                            "flag") if c in dec.columns]
        out = dec[cols].rename(columns={
            "axis": "Axis", "mean_delta": "Mean Δ%", "mean_delta_lo": "CI low",
            "mean_delta_hi": "CI high", "systematic_delta": "Systematic Δ%",
            "systematic_share": "Systematic share", "systematic_share_lo": "Share CI low",
            "systematic_share_hi": "Share CI high", "p_value": "p (any effect)",
            "placebo_delta": "Placebo Δ%", "excess_delta": "Excess over placebo",
            "excess_delta_lo": "Excess CI low", "excess_delta_hi": "Excess CI high",
            "n_pairs": "n pairs", "n_clusters": "n profiles", "flag": "Flag"})
        out["Axis"] = out["Axis"].map(lambda a: vocab.AXIS_LABELS.get(a, a))
        if "Systematic share" in out and (out["Systematic share"].astype(float) > 1).any():
            ui.explain("A systematic share above 1 means the identity effects alone imply a "
                       "larger gap than the one observed: such a row cannot be split into "
                       "consistent effect and jitter.")
        untested = (pd.to_numeric(dec["p_value"], errors="coerce") >= 0.05).any() \
            if "p_value" in dec else False
        if untested:  # an interval away from 0 beside p ≥ 0.05 reads as a contradiction
            ui.explain("**Share CI** resamples profiles around the fitted effects; it does not "
                       "test whether identity has any effect at all — **p (any effect)** does. "
                       "Where p is 0.05 or more, read the share as not shown to differ from "
                       "noise, whatever its interval.")
        ui.table(out, f"gap decomposition {model} {method} {task} {lang}", f"{PAGE}-dec")

st.divider()
ui.permalink(ps.link())
