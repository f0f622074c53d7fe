"""Display metadata of every stored column: header, description, unit, direction.

One entry per column name (:data:`COLUMNS`): a column means the same in every table that has
it. Where a name means something else in one table (``rho``, ``p_value``, ``mean_delta`` in
``merit_sensitivity``), that table overrides it (:data:`OVERRIDES`). :data:`DERIVED` describes
the columns the explorer derives and no file stores. Meanings follow docs/data-format.md.

Headers are global: one header, one description (a test checks), so the explorer can show the
right tooltip for a header without knowing which table it came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import pyarrow as pa

from rupeebias_core.registry.spec import (
    HIGHER_IS_MORE_CONSISTENT,
    HIGHER_IS_MORE_READABLE,
    LOWER_IS_FAIRER,
    Column,
    ColumnInfo,
    Direction,
)

#: Coverage of nominal 95 % Mean Δ% intervals, measured in simulation (methodology §4.11,
#: ``bench/validity.py``; a test holds them to that table): the paper's pair bootstrap, which
#: the ``upstream`` method keeps, and the profile interval of the ``corrected`` method.
PAIR_INTERVAL_COVERAGE = "50–58 %"
PROFILE_INTERVAL_COVERAGE = "93–97 %"
#: The tooltip of every 95 % interval bound. One header ("CI low") serves every kind of
#: interval, so the text names which intervals it speaks about.
INTERVAL = ("95% confidence interval: the range the value would plausibly take if the benchmark "
            "were run again. For Mean Δ% and V@10, the paper's intervals and the upstream "
            "method's resample pairs of answers as separate experiments (Wilson for V@10); "
            "pairs share answers, so these are too narrow: in simulation the Mean Δ% ones held "
            f"the true value only {PAIR_INTERVAL_COVERAGE} of the time. The corrected method "
            f"resamples whole profiles ({PROFILE_INTERVAL_COVERAGE} in simulation), as do the "
            "identity effects and the gap decomposition under both methods. Others: "
            "Methodology page.")
#: Published vs computed, for the ``source`` column and everything naming a source.
SOURCE = ("Published = transcribed from the RupeeBias paper (table named). Computed = computed "
          "by this project from raw model responses.")
PCT, PP, SHARE = "%", "pp", "share (0–1)"


def _i(label: str, description: str, unit: str | None = None,
       direction: Direction | None = None, aliases: tuple[str, ...] = ()) -> ColumnInfo:
    return ColumnInfo(label, description, unit, direction, aliases)


def _bounds(low: str, high: str, unit: str | None = None) -> tuple[ColumnInfo, ColumnInfo]:
    """The two bounds of a 95 % interval."""
    return _i(low, INTERVAL, unit), _i(high, INTERVAL, unit)


def _with_bounds(name: str, info: ColumnInfo, low: str = "CI low", high: str = "CI high"
                 ) -> dict[str, ColumnInfo]:
    lo, hi = _bounds(low, high, info.unit)
    return {name: info, f"{name}_lo": lo, f"{name}_hi": hi}


_MEAN_DELTA = _i("Mean Δ%", "Average % difference between the answers to two prompts that are "
                 "identical except for the demographic identifier. 0 = identical answers.",
                 PCT, LOWER_IS_FAIRER)
_TASK = _i("Use case", "Which of the five use cases (salary estimation, salary increment, "
           "counter-offer, service pricing as vendor or as client); `all` pools them.")
_P_KENDALL = _i("p (Fisher)", "p-value that the identities are ranked at random across the "
                "profiles (Friedman test; Fisher-combined over use cases where W is averaged).")

COLUMNS: Mapping[str, ColumnInfo] = MappingProxyType({
    # ---- keys and provenance
    "model": _i("Model ID", "Model slug, e.g. `claude-opus-4.7` or `smollm2-135m-instruct`; "
                "display names come from the `models` table."),
    "source": _i("Source", SOURCE),
    "method": _i("Method", "Upstream reproduces the authors' code exactly; corrected applies "
                 "this project's fixes (see Methodology). Published numbers always use the "
                 "authors' method."),
    "language": _i("Language", "`en` (English) or `hinglish`; `all` pools both."),
    "task": _TASK,
    "axis": _i("Axis", "Religion, Caste, Region, Gender, Disability or Urban/Rural; `all` pools "
               "them, `Mean` is the mean of the six (Kendall's W and robustness tables)."),
    "identifier_value": _i("Identifier", "The stated identity, e.g. `Hindu`, `SC/ST`, `Tier 1 "
                           "city` (placebo rows: the identity-free statement's id)."),
    "condition": _i("Condition", "`standard`, `fairness` (the fairness-instruction ablation) or "
                    "`placebo` (identity-free statements in the identity's place)."),
    "id": _i("Prompt id", "The upstream prompt id, e.g. `salary_estimation_en_00001`."),
    "profile_id": _i("Profile", "The base profile: P01–P18, R01–R27, N01–N27, S01–S09."),
    "question_variant_id": _i("Question variant", "Which wording of the question: Q1–Q3."),
    "flag": _i("Flag", "`upstream_markup_gaps`: the row's numbers are built on upstream "
               "counter-offer markups (relative gaps of markups, not a distance between answers: "
               "never shown as a gap, not decomposed); `includes_upstream_markup_gaps`: a row "
               "pooling use cases that include them; empty otherwise."),
    # ---- published extras
    "label": _i("Model", "The model's display name (`Axis mean` for the pooled row)."),
    "note": _i("Notes", "Provenance notes of the transcription."),
    "preferred": _i("Preferred", "One row per model, language, use case and axis is preferred: "
                    "the most precise printed version (the README 2-dp row for Table 2)."),
    # ---- Mean Δ% and V@10 (delta, leaderboard, gap_decomposition)
    **_with_bounds("mean_delta", _MEAN_DELTA),
    **_with_bounds("violation_10", _i(
        "V@10 %", "Violation@10%: share of prompt pairs whose answers differ by more than 10%.",
        PCT, LOWER_IS_FAIRER), "V@10 low", "V@10 high"),
    "n_pairs": _i("n pairs", "How many prompt pairs the number rests on. The paper does not "
                  "report n."),
    "n_violations": _i("n violations", "How many of those pairs differ by more than 10%."),
    **_with_bounds("mean_delta_unweighted", _i(
        "Mean Δ% (unweighted)", "Unweighted mean of the six axes' Mean Δ% (the Tables 3/4 "
        "'Mean' column): every axis counts the same, however many pairs it has.", PCT,
        LOWER_IS_FAIRER), "Unweighted CI low", "Unweighted CI high"),
    "mean_delta_task_axis": _i("Mean Δ% (use case × axis)", "Unweighted mean over the use case "
                               "× axis cells (the Figure 3b x-axis).", PCT, LOWER_IS_FAIRER),
    "n_tasks": _i("n use cases", "How many use cases the value averages over."),
    "n_axes": _i("n axes", "How many axes the value averages over."),
    # ---- Kendall's W
    "w": _i("W", "0 = the ranking of identities changes from prompt to prompt; 1 = the same "
            "identities are always ranked highest/lowest.", None, HIGHER_IS_MORE_CONSISTENT,
            ("Kendall's W", "Mean W", "Mean Kendall's W")),
    "p_value": _P_KENDALL,
    "p_bh": _i("p (BH)", "Benjamini–Hochberg-adjusted p-value: corrected for testing many "
               "values at once."),
    "significant": _i("Significant", "p (BH) below 0.05 (marked † in the paper's Tables 5/6)."),
    "rank": _i("Rank", "The model's rank by mean W among the models, per method and language "
               "(1 = highest; mean rows only)."),
    "profile": _i("W band", "The paper's consistency band of W; for computed models relative to "
                  "chance: `Not above chance` unless the permutation p < 0.05."),
    "w_chance": _i("W by chance", "W expected from independent rankings (1/m for m profiles), "
                   "averaged like W."),
    "w_corrected": _i("W above chance", "(W − chance) / (1 − chance): 0 = no more consistent "
                      "than chance.", None, HIGHER_IS_MORE_CONSISTENT),
    "w_perm_p": _i("W permutation p", "Permutation p-value of W (each profile's ranks "
                   "permuted)."),
    "n_blocks": _i("n blocks", "How many ranking blocks W rests on: profiles, each with its "
                   "question variants averaged."),
    "n_identifiers": _i("n identifiers", "How many identifiers the value rests on."),
    # ---- canonical pair gaps
    "privileged": _i("Privileged", "The first identifier of the axis's canonical pair (e.g. "
                     "Brahmin)."),
    "marginalised": _i("Marginalised", "The second identifier of the canonical pair (e.g. "
                       "Dalit)."),
    **_with_bounds("cpg", _i("CPG %", "Canonical pair gap: the first identity's mean answer "
                             "minus the second's, as % of their average (all their answers, "
                             "not matched slot by slot); positive = the first gets more.", PCT)),
    "sign_consistency": _i("Sign consistency %", "Share of matched prompts where the first "
                           "identifier got strictly more (identical answers count as not more: "
                           "see rank-biserial for the untied ones).", PCT),
    "n_matched_slots": _i("n matched slots", "Slots where both identifiers have a readable "
                          "answer."),
    "n_privileged": _i("n privileged", "Readable answers of the first identifier."),
    "n_marginalised": _i("n marginalised", "Readable answers of the second identifier."),
    "rank_biserial": _i("Rank-biserial", "Rank-biserial correlation of the pair's matched "
                        "answers (−1 to 1; positive = the first gets more)."),
    "ci_excludes_zero": _i("CI excludes 0", "Whether the 95% interval of the gap excludes 0."),
    # ---- maximum observed gaps
    **_with_bounds("gap", _i("Gap %", "Maximum observed gap: the largest % gap between any two "
                             "identifiers' mean answers on the axis.", PCT, LOWER_IS_FAIRER)),
    "top_identifier": _i("Highest", "The identifier with the highest mean answer."),
    "bottom_identifier": _i("Lowest", "The identifier with the lowest mean answer."),
    "n_rows": _i("n rows", "How many answers the number rests on."),
    # ---- language shift
    "rho_p": _i("ρ p-value", "p-value of the English vs Hinglish rank correlation."),
    "mean_delta_en": _i("Mean Δ% (English)", "Mean Δ% over the English pairs.", PCT,
                        LOWER_IS_FAIRER),
    "mean_delta_hinglish": _i("Mean Δ% (Hinglish)", "Mean Δ% over the Hinglish pairs.", PCT,
                              LOWER_IS_FAIRER),
    **_with_bounds("delta_shift", _i(
        "Hinglish − English", "Hinglish minus English Mean Δ%, each pooled over the pairs its "
        "language has (as upstream); positive = Hinglish prompts produce larger gaps.", PP),
        "Shift CI low", "Shift CI high"),
    "n_pairs_en": _i("n pairs English", "English prompt pairs behind the shift."),
    "n_pairs_hinglish": _i("n pairs Hinglish", "Hinglish prompt pairs behind the shift."),
    **_with_bounds("delta_shift_std", _i(
        "Like-for-like shift", "The shift on answers usable in both languages (same use case, "
        "axis, profile, question variant and identifier), per use case, averaged over use "
        "cases with equal weight: the figure to quote.", PP),
        "Like-for-like CI low", "Like-for-like CI high"),
    "n_tasks_std": _i("n use cases (like-for-like)", "Use cases behind the like-for-like "
                      "shift."),
    # ---- question-variant robustness
    **_with_bounds("min_rho", _i(
        "Min ρ", "The lowest Spearman correlation between the identity rankings under any two "
        "question wordings, averaged over use cases; ≥ 0.85 counts as robust.", None,
        HIGHER_IS_MORE_CONSISTENT, ("Mean min ρ",))),
    "robust": _i("Robust (≥ 0.85)", "Whether min ρ is at least 0.85 (the paper's ✓)."),
    # ---- identifier deviation
    "pct_dev": _i("Deviation %", "How far the identity's mean answer sits above (+) or below (−) "
                  "the unweighted mean of all identities on its axis, in %.", PCT),
    "n_slices": _i("n slices", "How many (use case × language) slices the value averages "
                   "over."),
    "mean_value": _i("Mean answer", "The identity's mean answer, in the metric's unit."),
    # ---- fairness-instruction ablation
    "std_mean_delta": _i("Mean Δ% standard", "Mean Δ% with the standard system prompt (salary "
                         "estimation).", PCT, LOWER_IS_FAIRER),
    "fair_mean_delta": _i("Mean Δ% with instruction", "Mean Δ% with the fairness instruction "
                          "appended to the system prompt.", PCT, LOWER_IS_FAIRER),
    **_with_bounds("delta", _i(
        "Change (points)", "Mean Δ% with the instruction minus without: negative = the "
        "instruction reduced the gap.", PP, LOWER_IS_FAIRER),
        "Change CI low", "Change CI high"),
    "reduction_pct": _i("Reduction %", "The relative reduction: (standard − with instruction) "
                        "/ standard × 100.", PCT),
    "n_pairs_std": _i("n pairs standard", "Prompt pairs behind the standard Mean Δ%."),
    "n_pairs_fair": _i("n pairs with instruction", "Prompt pairs behind the with-instruction "
                       "Mean Δ%."),
    "direction": _i("Direction", "Published: what Appendix E's prose says the instruction "
                    "did (reduced, increased or not increased). Computed (explorer): shrank or "
                    "grew where the 95 % interval of the change excludes 0, else unclear."),
    # ---- identity effects
    **_with_bounds("effect_pct", _i(
        "Effect %", "By how much, in %, this identity's answers sit above (+) or below (−) the "
        "average identity of its axis on matched slots.", PCT)),
    "effect_natural": _i("Effect in money", "The same effect in the use case's unit (`unit`), at "
                         "the block's typical answer; empty for pooled use cases and where "
                         "that typical answer is not a plausible one.",
                         aliases=("Effect in ₹", "Effect in pp", "Effect in pp of markup")),
    "effect_natural_lo": _i("Money CI low", INTERVAL,
                            aliases=("Money CI", "₹ CI", "pp CI", "pp of markup CI")),
    "effect_natural_hi": _i("Money CI high", INTERVAL),
    "unit": _i("Unit", "Unit of the natural-unit values: INR/year, INR, pp, LPA or pp of "
               "markup."),
    "typical_answer": _i("Typical answer", "The block's geometric-mean answer, where the "
                         "natural-unit effect is evaluated."),
    "n_slots": _i("n slots", "Matched slots behind the effect."),
    "n_clusters": _i("n profiles", "Profiles (the independent clusters) behind the number."),
    # ---- gap decomposition
    "systematic_delta": _i("Systematic Δ%", "The Mean Δ% implied by the identity effects "
                           "alone, after empirical-Bayes shrinkage (about 0 with no effects).",
                           PCT, LOWER_IS_FAIRER),
    "systematic_delta_raw": _i("Systematic Δ% (raw)", "The same from the unshrunk effects.",
                               PCT),
    "systematic_delta_null": _i("Systematic Δ% under noise", "The raw figure's mean under "
                                "permutation: what noise alone gives.", PCT),
    "idiosyncratic_delta": _i("Idiosyncratic Δ%", "Mean Δ% minus systematic Δ%: the part of "
                              "the gap that is jitter.", PCT),
    **_with_bounds("systematic_share", _i(
        "Systematic share", "How much of a gap would remain if the model had only consistent "
        "identity effects and no random jitter.", SHARE), "Share CI low", "Share CI high"),
    "placebo_delta": _i("Placebo Δ%", "Mean Δ% between identity-free placebo statements (\"I "
                        "am left-handed\") in the same slots: the noise floor.", PCT),
    **_with_bounds("excess_delta", _i(
        "Excess over placebo", "Mean Δ% minus the placebo floor (paired interval), over the "
        "parts with placebo pairs in at least two profiles.", PCT, LOWER_IS_FAIRER),
        "Excess CI low", "Excess CI high"),
    "placebo_coverage": _i("Placebo coverage", "Share of the identity pairs in parts that have "
                           "placebo pairs; below 1 the excess describes only them.", SHARE),
    "n_placebo_pairs": _i("n placebo pairs", "Placebo pairs behind the floor."),
    # ---- missingness and parse health
    "n_refusal": _i("n refusals", "Answers that refused."),
    "n_unusable": _i("n unusable", "Answers without a number the method can use (refusals "
                     "included)."),
    "refusal_rate": _i("Refusal rate", "Share of the answers that refused.", SHARE),
    "unusable_rate": _i("Unusable rate", "Share of the answers without a usable number "
                        "(refusals included).", SHARE),
    "p_refusal": _i("p (refusal)", "Within-profile permutation test that the refusal rate "
                    "depends on identity."),
    "p_refusal_bh": _i("p (refusal, BH)", "The same, Benjamini–Hochberg-adjusted over the "
                       "blocks of a model and method."),
    "p_unusable": _i("p (unusable)", "Within-profile permutation test that the unusable rate "
                     "depends on identity."),
    "p_unusable_bh": _i("p (unusable, BH)", "The same, Benjamini–Hochberg-adjusted over the "
                        "blocks of a model and method."),
    "mean_delta_fill_lo": _i("Fill-in low", "Mean Δ% if every missing answer were filled with "
                             "its slot's median: the low end of a sensitivity range.", PCT),
    "mean_delta_fill_hi": _i("Fill-in high", "Mean Δ% if every missing answer were filled with "
                             "the end of its slot's observed range that differs most: the high "
                             "end of a sensitivity range (not a bound).", PCT),
    "parse_health": _i("Parse health %", "Share of the answers with a readable number.", PCT,
                       HIGHER_IS_MORE_READABLE),
    "strict_rate": _i("Strict format %", "Share of the answers in the exact requested format.",
                      PCT, HIGHER_IS_MORE_READABLE),
    "n_parsed": _i("n parsed", "Answers with a readable number."),
    "n_refusals": _i("n refusals", "Answers that refused."),
    "n_strict": _i("n strict", "Answers in the exact requested format."),
    # ---- parsed responses
    "value": _i("Parsed value", "The number read from the answer, in its natural unit."),
    "metric_value": _i("Metric value", "The number the metrics use (after the method's loading "
                       "rules; empty when the answer is excluded)."),
    "strict": _i("Exact format", "Whether the answer came in the exact requested format."),
    "refusal": _i("Refusal", "Whether the answer refused."),
    "metric_unit": _i("Metric unit", "Unit of the metric value."),
    "currency": _i("Currency", "The currency the answer was stated in."),
    "included": _i("Included", "Whether the answer counts in the metrics under this method."),
    "exclusion_reason": _i("Exclusion reason", "Why the answer is left out (e.g. a duplicate); "
                           "empty when it is included."),
    "row_index": _i("Row index", "Position of the response in its responses file."),
    # ---- prompts
    "identifier_phrase": _i("Identifier phrase", "The identity as phrased in the prompt (client "
                            "rows hold the third-person fragment)."),
    "question_variant": _i("Question wording", "The text of the question variant."),
    "prompt": _i("Prompt", "The user message, byte-exact with the released dataset."),
    "system_prompt": _i("System prompt", "The system message actually sent (fairness rows have "
                        "the instruction appended)."),
    "system_prompt_style": _i("System prompt style", "`indented` (as the published runs were "
                              "sent) or `dedented`."),
    "institution": _i("Institution", "The candidate's institution (salary estimation)."),
    "ownership": _i("Ownership", "Public or private institution (salary estimation)."),
    "cgpa": _i("CGPA", "The candidate's CGPA (salary estimation)."),
    "company": _i("Company", "The employer (increment and counter-offer)."),
    "experience_years": _i("Experience", "Years of experience (increment and counter-offer).",
                           "years"),
    "achievement_level": _i("Achievement level", "The achievement band (increment)."),
    "achievement_text": _i("Achievement", "The achievement description (increment)."),
    "current_ctc_lpa": _i("Current CTC", "Current pay (increment).", "LPA"),
    "offered_ctc_lpa": _i("Offered CTC", "The offer on the table (counter-offer).", "LPA"),
    "offer_strength": _i("Offer strength", "How strong the offer is (counter-offer)."),
    "service": _i("Service", "The service priced (service pricing)."),
    "service_description": _i("Service description", "What the service involves."),
    "rating_tier": _i("Rating tier", "The vendor's rating band (service pricing)."),
    "rating_phrase": _i("Rating phrase", "The rating as phrased in the prompt."),
    "side": _i("Side", "Who asks: the vendor or the customer (service pricing)."),
    # ---- responses (docs/collect.md)
    "response": _i("Raw answer", "The raw response text; empty when the request failed."),
    "finish_reason": _i("Finish reason", "`stop`, `length`, …; `error` for failed requests."),
    "error": _i("Error", "The terminal error text of a failed request."),
    "reasoning_content": _i("Reasoning", "Reasoning text the model returned separately."),
    "model_returned": _i("Model returned", "The model id the endpoint reported."),
    "system_fingerprint": _i("System fingerprint", "The backend fingerprint the endpoint "
                             "reported."),
    "temperature": _i("Temperature", "The sampling temperature sent."),
    "max_tokens": _i("Max tokens", "The token limit sent."),
    "system_prompt_sha256": _i("System prompt SHA-256", "Hash of the system prompt sent."),
    "tokens_prompt": _i("Prompt tokens", "Tokens in the request (last attempt)."),
    "tokens_completion": _i("Completion tokens", "Tokens in the answer (last attempt)."),
    "latency_s": _i("Latency", "Time the last attempt took.", "s"),
    "started_at": _i("Started", "When the last attempt started (UTC, ISO 8601)."),
    "finished_at": _i("Finished", "When the last attempt finished (UTC, ISO 8601)."),
    "sample_index": _i("Sample", "Which sample of the prompt (first = 0) when several were "
                       "drawn."),
    "status": _i("Request status", "`ok`, `empty` or `error`."),
    "model_requested": _i("Model requested", "The provider model id sent."),
    "reasoning_effort": _i("Reasoning effort", "The reasoning effort sent (empty if "
                           "omitted)."),
    "prompt_sha256": _i("Prompt SHA-256", "Hash of the prompt sent."),
    "attempts": _i("Attempts", "Attempts in the last run that sent the request."),
    "n_sends": _i("n sends", "Requests sent for this prompt over all runs."),
    "http_status": _i("HTTP status", "HTTP status of the last attempt."),
    "response_id": _i("Response id", "The id the endpoint gave the response."),
    "cache_key": _i("Cache key", "The request's key in the collector's cache."),
    # ---- published reference tables
    "provider_id": _i("Provider id", "The id the model was requested under."),
    "weights": _i("Weights", "`open` or `closed` weights."),
    "price_in_usd_per_m": _i("Input price", "Price of input tokens.", "USD per million tokens"),
    "price_out_usd_per_m": _i("Output price", "Price of output tokens.",
                              "USD per million tokens"),
    "access": _i("Access", "How the authors accessed the model."),
    "use_case": _TASK,
    "n_profiles": _i("Base profiles", "Base profiles per use case (Table 1)."),
    "n_question_variants": _i("Question variants", "Question wordings per use case (Table 1)."),
    "n_languages": _i("Languages", "Languages per use case (Table 1)."),
    "n_prompts": _i("Prompts", "Prompts per use case (Table 1)."),
    "study": _i("Study", "`achievement_descriptions` (Table 14, Appendix G) or "
                "`hinglish_validation` (Tables 19 and 20, Appendix J)."),
    "criterion": _i("Criterion", "What the raters judged."),
    "rating": _i("Rating", "The rating given; empty for the agreement rows (Table 20)."),
    "n": _i("Ratings", "How many ratings (Table 14: survey responses; Table 19: initial "
            "ratings)."),
    "pct": _i("% within criterion", "Share of the criterion's ratings (Table 19).", PCT),
    "pabak": _i("PABAK", "Prevalence- and bias-adjusted kappa: agreement between the "
                "annotators on the initial ratings (Table 20); 1 = perfect agreement.", None,
                HIGHER_IS_MORE_CONSISTENT),
})

#: Where a column name means something else in one table: table -> column -> metadata.
OVERRIDES: Mapping[str, Mapping[str, ColumnInfo]] = MappingProxyType({
    "kendall_w_usecase": {"p_value": _P_KENDALL},
    "language_shift": {
        "rho": _i("Spearman ρ (EN vs HI ranking)", "Spearman correlation between the English "
                  "and Hinglish rankings of the axis's identities (by mean answer): 1 = the "
                  "same identities favoured in both languages.", None,
                  HIGHER_IS_MORE_CONSISTENT),
    },
    "merit_sensitivity": {
        **_with_bounds("mean_delta", _i(
            "Merit Δ%", "How much answers move when the profile (university and CGPA, "
            "experience, offer, rating) changes for a fixed identity and wording. Higher = the "
            "model responds to merit.", PCT)),
        "n_pairs": _i("n profile pairs", "How many pairs of profiles the number rests on."),
    },
    "profile_rank_agreement": {
        **_with_bounds("rho", _i(
            "Mean ρ", "Mean Spearman ρ between the identities' rankings of the profiles: 1 = "
            "every identity ranks the profiles the same way.", None,
            HIGHER_IS_MORE_CONSISTENT)),
        "n_pairs": _i("n identifier pairs", "How many pairs of identities the mean rests on."),
    },
    "identity_effects": {
        "p_value": _i("p (identity)", "Within-profile permutation test of \"no systematic effect "
                      "of this identity\", on the effect divided by its standard error (999 "
                      "permutations; 9,999 more where none of the 999 is as extreme, so p can go "
                      "as low as about 0.0001)."),
    },
    "gap_decomposition": {
        "p_value": _i("p (any effect)", "Permutation test that identity has any systematic "
                      "effect in the cell (labels permuted jointly within each profile)."),
    },
    "missingness": {
        "n": _i("n answered", "Prompts answered (first answer each)."),
    },
    "parse_health": {"refusal_rate": _i("Refusal rate %", "Share of the answers that refused.",
                                        PCT)},
    "parsed": {
        "status": _i("Parse status", "What parsing found: a number, a refusal, or why none."),
        "unit": _i("Parsed unit", "The unit the answer's number was stated in."),
    },
    "dataset_composition": {
        "n_identifiers": _i("Identifiers", "Identifiers per use case (Table 1)."),
    },
})

#: Columns the explorer derives (not stored in any file).
DERIVED: Mapping[str, ColumnInfo] = MappingProxyType({
    "source_kind": _i("Source type", SOURCE),
    "sources": _i("Sources", SOURCE),
    "coverage": _i("Coverage", "Share of the benchmark's prompt pairs behind a computed number "
                   "(parse failures and missing answers form no pair), or why a cell has no "
                   "number."),
    "basis": _i("Basis", "Whether the cell rests on enough answers to be read (the page says "
                "how many it needs): a thinner cell is drawn faint and left out of the page's "
                "sentence, since one or two answers set its number."),
})

def info(table: str, column: str) -> ColumnInfo:
    """The display metadata of ``column`` in ``table`` (the table's override, else the
    shared entry); KeyError for a column nobody described."""
    return OVERRIDES.get(table, {}).get(column) or COLUMNS[column]


def make_columns(table: str, specs: Sequence[tuple[str, pa.DataType]]) -> tuple[Column, ...]:
    """Nullable columns from ``(name, type)`` pairs, with their metadata."""
    return tuple(Column(name, typ, info(table, name)) for name, typ in specs)


def make_fields(table: str, specs: Sequence[tuple[str, pa.DataType, bool]]
                ) -> tuple[Column, ...]:
    """Columns from ``(name, type, nullable)`` triples, with their metadata."""
    return tuple(Column(name, typ, info(table, name), nullable) for name, typ, nullable in specs)
