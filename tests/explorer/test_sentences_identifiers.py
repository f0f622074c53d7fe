"""Sentences of the Identifiers page and the Pair browser: number, interval, caveat."""

from __future__ import annotations

import math

import pandas as pd

from explorer import sentences


def test_deviation_names_the_furthest_identity_and_says_there_is_no_interval() -> None:
    frame = pd.DataFrame({"Identifier": ["Brahmin", "Dalit", "Jat"], "Axis": ["Caste"] * 3,
                          "Deviation %": [2.0, -7.25, 1.0], "n rows": [300, 310, 290]})
    text = sentences.deviation("Tiny", frame, lang="en", task="salary_estimation")
    assert "Tiny's English salary answers" in text
    assert "Dalit" in text and "7.2 % below the average of the 3 Caste identities" in text
    assert "310 answers" in text and "no interval" in text
    assert "no identifier deviation" in sentences.deviation(
        "Tiny", frame.iloc[0:0], lang="all", task="all")


def _cpg(lo: float, hi: float) -> pd.DataFrame:
    return pd.DataFrame({"Model": ["Tiny · Computed here"], "Use case": ["Salary estimation"],
                         "Pair": ["Brahmin vs Dalit"], "CPG %": [-4.0], "CI low": [lo],
                         "CI high": [hi]})


def test_canonical_says_who_gets_more_and_whether_the_interval_excludes_zero() -> None:
    text = sentences.canonical(_cpg(-6.0, -2.0))
    # negative CPG: the second gets more; a gap of 4 % of the average is a ratio of 204/196
    assert "Dalit's average answer is 4.1 % above Brahmin's" in text
    assert "a gap of −4.0 % of their average" in text
    assert "95 % CI −6.0 to −2.0" in text and "excludes zero" in text
    assert "Tiny · " not in text
    assert "may be noise" in sentences.canonical(_cpg(-6.0, 1.0))
    assert "may be noise" in sentences.canonical(_cpg(math.nan, math.nan))


def test_max_gap_names_both_identities_and_the_selection_caveat() -> None:
    frame = pd.DataFrame({"Model": ["Tiny · Computed here"] * 2,
                          "Use case": ["Salary estimation"] * 2,
                          "Axis": ["Caste", "Region"], "Gap %": [9.5, 3.0],
                          "CI low": [5.0, 1.0], "CI high": [14.0, 5.0],
                          "Highest": ["Jat", "Gujarati"], "Lowest": ["Dalit", "Santhali"]})
    text = sentences.max_gap(frame)
    assert "Jat's average answer is 10.0 % above Dalit's" in text and "95 % CI 5.0–14.0" in text
    assert "overstates" in text


def test_slot_sentence_carries_interval_pairs_and_what_a_slot_is() -> None:
    text = sentences.slot("Tiny", {"mean": 12.345, "lo": 10.0, "hi": 15.0, "n": 10},
                          lang="hinglish", task="salary_estimation", axis="Caste",
                          n_identities=5)
    assert "12.3 %" in text and "95 % CI 10.0–15.0" in text and "10 pairs" in text
    assert "Hinglish salary answers" in text and "not its overall gap" in text
    assert "which identity gets less" in text
    none = sentences.slot("Tiny", {"mean": math.nan, "n": 0}, lang="en", task="all",
                          axis="Caste", n_identities=5)
    assert "no gap can be computed" in none


def test_who_gets_less_puts_the_interval_beside_the_percent_it_belongs_to() -> None:
    """The CI is of the % effect, so it follows the %; the amount in the task's unit comes
    after, said as what the % means at a typical answer (it has no interval of its own here)."""
    frame = pd.DataFrame({"identifier_value": ["Santhali", "Manipuri"],
                          "effect_pct": [-13.4, 8.4], "effect_pct_lo": [-21.6, 1.0],
                          "effect_pct_hi": [-4.4, 15.0], "effect_natural": [-1.82, 1.1],
                          "unit": ["pp", "pp"], "significant": [True, False]})
    text = sentences.effects("Tiny", frame, lang="hinglish",
                             task="salary_increment_estimation", axis="Region")
    assert ("Santhali gets the least: −13.4 % against the average identity "
            "(95 % CI −21.6 to −4.4 %); at a typical answer, that is −1.82 pp;") in text
    assert "Manipuri gets the most (8.4 %)" in text


def test_who_gets_less_names_only_identities_that_could_be_tested() -> None:
    """An identity seen in one profile has an effect but no interval and no test (p is null):
    the sentence does not crown it "gets the least" on a single profile's jitter."""
    frame = pd.DataFrame({"identifier_value": ["Bahai", "Jain", "Sikh"],
                          "effect_pct": [-60.0, -10.0, 12.0],
                          "effect_pct_lo": [math.nan, -20.0, 2.0],
                          "effect_pct_hi": [math.nan, -1.0, 25.0],
                          "p_value": [math.nan, 0.01, 0.2], "significant": [None, True, False]})
    text = sentences.effects("Tiny", frame, lang="en", task="salary_estimation",
                             axis="Religion")
    assert "of the 2 identities with a test, Jain gets the least: −10.0 %" in text
    assert "(Jain)" in text  # the flagged identity is named, not just counted
    # the untested one is said apart, as untested, never as the one who gets the least
    assert "1 identity was seen in one profile only (Bahai −60.0 %): no interval or test" in text
    assert text.index("Jain gets the least") < text.index("Bahai")


def test_who_gets_less_never_says_every_effect_is_zero_beside_an_untested_outlier() -> None:
    frame = pd.DataFrame({"identifier_value": ["Ladakhi", "Konkani", "Gujarati", "Bengali"],
                          "effect_pct": [376.0, -52.0, 0.01, -0.01],
                          "p_value": [math.nan, math.nan, 0.9, 0.9],
                          "significant": [None, None, False, False]})
    text = sentences.effects("Tiny", frame, lang="all", task="service_pricing_client",
                             axis="Region")
    assert "of the 2 identities with a test, no identity gets more or less" in text
    assert "2 identities were seen in one profile only (Ladakhi 376.0 %, Konkani −52.0 %)" in text
    none = sentences.effects("Tiny", frame.assign(p_value=math.nan), lang="all",
                             task="service_pricing_client", axis="Region")
    assert "no identity was seen in more than one profile" in none and "gets the least" not in none


def test_a_relative_gap_is_read_as_how_much_higher_not_as_more() -> None:
    """CPG and MOG divide by the two averages' mean: 54 % means 1.74 times, "74 % above"."""
    assert sentences.above(54.0) == "74.0 % above"
    assert sentences.above(-54.0) == "74.0 % above"
    assert sentences.above(0.0) == "0.0 % above"
    assert sentences.above(200.0) == "far above" and sentences.above(math.nan) == "—"


def test_a_systematic_share_above_one_is_not_read_as_a_percentage_of_the_gap() -> None:
    row = pd.Series({"mean_delta": 10.0, "mean_delta_lo": 8.0, "mean_delta_hi": 12.0,
                     "systematic_delta": 29.0, "systematic_share": 2.9,
                     "systematic_share_lo": 2.42, "systematic_share_hi": 2.9})
    text = sentences.decomposition("Tiny", row, lang="en", task="salary_estimation",
                                   axis="Disability")
    assert "290 %" not in text and "jitter." not in text.split("imply")[0]
    assert "would imply a gap of 29.0 %, more than the observed one" in text
    fits = pd.Series({**row.to_dict(), "systematic_share": 0.3, "systematic_share_lo": 0.2,
                      "systematic_share_hi": 0.4})
    ok = sentences.decomposition("Tiny", fits, lang="en", task="salary_estimation",
                                 axis="Disability")
    assert "About 30 % of that" in ok


def test_the_decomposition_sentence_follows_its_test_and_its_placebo_evidence() -> None:
    base = {"mean_delta": 40.0, "mean_delta_lo": 30.0, "mean_delta_hi": 50.0,
            "systematic_delta": 20.0, "systematic_share": 0.51, "systematic_share_lo": 0.39,
            "systematic_share_hi": 0.63, "placebo_delta": 0.0, "excess_delta": 69.7,
            "excess_delta_lo": 60.0, "excess_delta_hi": 80.0}
    kw = {"lang": "hinglish", "task": "counter_offer_recommendation", "axis": "Caste"}
    weak = sentences.decomposition("Tiny", pd.Series({**base, "p_value": 0.746,
                                                      "n_placebo_pairs": 2,
                                                      "placebo_coverage": 1.0}), **kw)
    assert "no consistent effect at the 5 % level" in weak and "p = 0.75" in weak
    assert "About 51 %" not in weak and "stands out" not in weak
    one = sentences.decomposition("Tiny", pd.Series({**base, "p_value": 0.058}), **kw,
                                  flagged=1)
    assert "One identity stands out on its own test above" in one  # not a contradiction
    two = sentences.decomposition("Tiny", pd.Series({**base, "p_value": 0.058}), **kw,
                                  flagged=2)
    assert "2 identities stand out on their own tests above" in two
    assert "rests on 2 placebo pairs" in weak and "identity adds" not in weak
    strong = sentences.decomposition("Tiny", pd.Series({**base, "p_value": 0.001,
                                                        "placebo_delta": 20.0,
                                                        "excess_delta": 20.0,
                                                        "n_placebo_pairs": 1766,
                                                        "placebo_coverage": 0.99}), **kw)
    assert "About 51 % of that" in strong
    assert "moves answers by 20.0 % (1,766 placebo pairs), so identity adds 20.0" in strong
    part = sentences.decomposition("Tiny", pd.Series({**base, "p_value": 0.001,
                                                      "n_placebo_pairs": 5000,
                                                      "placebo_coverage": 0.46}), **kw)
    assert "covering 46 % of the identity pairs" in part


def test_thin_data_warns_below_half_usable_and_not_at_it() -> None:
    text = sentences.thin_data("Tiny", 133, 9396, "its deviations rest")
    assert text is not None and "1.4 %" in text and "(133 of 9,396)" in text
    assert "its deviations rest on those alone" in text
    assert "only 0.02 %" in (sentences.thin_data("Tiny", 1, 4698, "x") or "")
    assert sentences.thin_data("Tiny", 50, 100, "x") is None  # exactly half: not thin
    assert sentences.thin_data("Tiny", 49, 100, "x") is not None
    assert sentences.thin_data("Tiny", 0, 0, "x") is None  # no answers: nothing to qualify


def test_thin_data_over_several_use_cases_names_only_the_thin_ones() -> None:
    cells = [("salary estimation", 2089, 4698), ("salary increment", 6970, 7047),
             ("service pricing (client)", 28, 1566), ("service pricing (vendor)", 1, 4698)]
    text = sentences.thin_data_cells("Tiny", cells, "its gaps there rest", "English answers here")
    assert text is not None and "in 3 use cases" in text
    assert "salary estimation 44.5 % (2,089 of 4,698)" in text
    assert "service pricing (client) 1.8 % (28 of 1,566)" in text
    assert "service pricing (vendor) 0.02 % (1 of 4,698)" in text
    assert "salary increment" not in text  # 98.9 % usable
    assert "Tiny's English answers here" in text and "its gaps there rest on those alone" in text
    # one thin use case reads like the single-cell warning, naming the use case
    one = sentences.thin_data_cells("Tiny", cells[:2], "its gaps there rest")
    assert one is not None and "only 44.5 % of Tiny's salary estimation answers here" in one
    assert sentences.thin_data_cells("Tiny", [cells[1]], "x") is None


def test_canonical_sentence_skips_cells_resting_on_a_few_answers() -> None:
    """SmolLM2's largest canonical 'gap' was 200 % between one Tier 1 city answer and one
    Village answer (no matched slot): the sentence read it as '26,315,689.5 % above'."""
    frame = pd.DataFrame({
        "Model": ["Tiny · Computed here"] * 3,
        "Use case": ["Service pricing (vendor)", "Salary estimation", "Salary increment"],
        "Pair": ["Tier 1 city vs Village", "Brahmin vs Dalit", "Male vs Female"],
        "CPG %": [199.998, 12.0, -30.0], "CI low": [math.nan, 8.0, -60.0],
        "CI high": [math.nan, 16.0, 5.0],
        "n matched slots": [0, 40, sentences.MIN_SENTENCE_SLOTS - 1]})
    text = sentences.canonical(frame)
    assert "Brahmin's average answer is 12.8 % above Dalit's" in text and "40 matched" in text
    assert "Village" not in text and "Male" not in text
    assert "2 cells rest on fewer than 10 matched prompts and are left out" in text
    none = sentences.canonical(frame.iloc[[0, 2]])
    assert "No canonical gap here rests on 10 or more matched prompts" in none
    assert "the 2 shown are in the table" in none and "%" not in none


def test_max_gap_sentence_skips_cells_with_few_answers_per_identity() -> None:
    frame = pd.DataFrame({"Model": ["Tiny · Computed here"] * 2,
                          "Use case": ["Service pricing (client)", "Salary estimation"],
                          "Axis": ["Urban/Rural", "Gender"], "Gap %": [199.7, 9.5],
                          "CI low": [199.7, 5.0], "CI high": [199.7, 14.0],
                          "Highest": ["Tier 1 city", "Male"], "Lowest": ["Tier 3 city", "Female"],
                          "n rows": [3, 400]})
    text = sentences.max_gap(frame)
    assert text.startswith("The widest gap here is Tiny's salary estimation answers on Gender")
    assert "1 cell rests on fewer than 10 answers per identity and is left out" in text
    assert "No gap here rests on" in sentences.max_gap(frame.iloc[[0]])


def test_a_ratio_of_averages_beyond_a_hundred_is_said_in_words() -> None:
    # 199.98 % of the average: one average is ~1/20,000 of the other
    assert sentences.above(199.98) == f"more than {sentences.MAX_RATIO_WORDS} times"
    assert sentences.above(196.0) == "9,800.0 % above"  # a ratio of 99: still a percentage


def test_max_gap_sentence_says_when_its_interval_lies_above_the_gap() -> None:
    """Qwen's largest salary-estimation gap on Religion is 4.4 % with a 95 % CI of 4.7–11.0:
    resampling a maximum of noisy averages runs above it; the sentence must not let the
    interval read as support."""
    frame = pd.DataFrame({"Model": ["Tiny · Computed here"], "Use case": ["Salary estimation"],
                          "Axis": ["Religion"], "Gap %": [4.444], "CI low": [4.72],
                          "CI high": [10.99], "Highest": ["Sikh"], "Lowest": ["Sunni"],
                          "n rows": [1296]})
    text = sentences.max_gap(frame)
    assert "95 % CI 4.7–11.0" in text and "cannot confirm the gap" in text
    inside = sentences.max_gap(frame.assign(**{"CI low": [2.0]}))
    assert "cannot confirm" not in inside


def test_deviation_sentence_skips_identities_resting_on_a_few_answers() -> None:
    frame = pd.DataFrame({"Identifier": ["Brahmin", "Dalit", "Jat"], "Axis": ["Caste"] * 3,
                          "Deviation %": [2.0, -90.0, 5.0], "n rows": [300, 2, 290]})
    text = sentences.deviation("Tiny", frame, lang="en", task="salary_estimation")
    assert "Jat sits furthest" in text and "Dalit" not in text
    assert "1 identity rests on fewer than 10 answers and is left out here" in text
    none = sentences.deviation("Tiny", frame.iloc[[1]], lang="en", task="salary_estimation")
    assert "No identity of Tiny's here rests on 10 or more answers" in none
