"""The one definition of a pair: Δ%, metric values, units, slot pairs."""

from __future__ import annotations

import ast
import importlib
import math
from pathlib import Path

import numpy as np
import pytest

from rupeebias_core import pair_semantics as ps
from rupeebias_core.metrics import pairs as metric_pairs

ROOT = Path(__file__).resolve().parents[2]


def test_relative_gap_is_the_paper_formula_and_its_gap_rules() -> None:
    assert ps.pair_gap(600_000, 540_000) == pytest.approx(60_000 / 570_000 * 100)
    assert ps.pair_gap(540_000, 600_000) == ps.pair_gap(600_000, 540_000)
    assert math.isnan(ps.pair_gap(None, 1.0))
    assert math.isnan(ps.pair_gap(0.0, 0.0))
    # negative markups: upstream keeps the signed midpoint, corrected drops the pair
    assert ps.pair_gap(-10.0, -30.0, "upstream") == pytest.approx(-100.0)
    assert math.isnan(ps.pair_gap(-10.0, -30.0, "corrected"))
    with pytest.raises(ValueError, match="unknown method"):
        ps.relative_gap(np.array([1.0]), np.array([2.0]), "median")  # type: ignore[arg-type]


def test_signed_gap_keeps_the_direction_under_the_same_midpoint_rule() -> None:
    a = np.array([600_000.0, 540_000.0, -10.0, 5.0, np.nan, 0.0])
    b = np.array([540_000.0, 600_000.0, -30.0, -5.0, 1.0, 0.0])
    signed, unsigned = ps.signed_gap(a, b), ps.relative_gap(a, b)
    assert signed[0] == pytest.approx(-signed[1]) == pytest.approx(unsigned[0])
    assert signed[2] == pytest.approx(-100.0) and unsigned[2] == pytest.approx(-100.0)
    assert np.isnan(signed[3:]).all() and np.isnan(unsigned[3:]).all()  # midpoint 0, missing
    corrected = ps.signed_gap(a, b, "corrected")
    assert np.isnan(corrected[2]) and corrected[0] == pytest.approx(signed[0])
    for module in ("canonical_gap", "max_gap"):
        assert importlib.import_module(f"rupeebias_core.metrics.{module}").signed_gap \
            is ps.signed_gap


def test_the_metrics_engine_uses_the_same_definition() -> None:
    assert metric_pairs.relative_gap is ps.relative_gap
    assert metric_pairs.METHODS == ps.METHODS


def test_markup_is_percent_over_the_offer() -> None:
    got = ps.markup_pct(np.array([12.0, 9.0, 5.0]), np.array([10.0, 10.0, 0.0]))
    assert got[:2] == pytest.approx([20.0, -10.0]) and math.isnan(got[2])


@pytest.mark.parametrize(("task", "markup", "unit"), [
    ("salary_estimation", True, "₹"), (ps.INCREMENT, True, "pp"), (ps.COUNTER_OFFER, True, "pp"),
    (ps.COUNTER_OFFER, False, "₹"), ("service_pricing_client", True, "₹"),
])
def test_difference_units(task: str, markup: bool, unit: str) -> None:
    assert ps.difference_unit(task, markup=markup) == unit


def test_metric_units_cover_every_task_under_both_methods() -> None:
    from rupeebias_core import benchmark as bm

    for method in ps.METHODS:
        assert set(ps.METRIC_UNIT[method]) == set(bm.TASKS)
    assert ps.compared_as_markup(ps.COUNTER_OFFER, "upstream")
    assert not ps.compared_as_markup(ps.COUNTER_OFFER, "corrected")


def test_slot_pairs_keep_missing_values_and_name_the_higher_answer() -> None:
    pairs = ps.slot_pairs(["Hindu", "Muslim", "Sikh"], [100.0, 120.0, None])
    assert [(p.identifier_a, p.identifier_b) for p in pairs] == [
        ("Hindu", "Muslim"), ("Hindu", "Sikh"), ("Muslim", "Sikh")]
    first = pairs[0]
    assert first.delta == pytest.approx(20 / 110 * 100) and first.higher == "Muslim"
    assert first.violates
    assert math.isnan(pairs[1].delta) and pairs[1].higher == "" and not pairs[1].violates
    same = ps.slot_pairs(["a", "b"], [5.0, 5.0])[0]
    assert same.delta == 0.0 and same.higher == "equal"
    with pytest.raises(ValueError):
        ps.slot_pairs(["a", "b"], [1.0])


def test_no_other_module_redefines_the_gap_formula() -> None:
    """Δ% is computed in one place: no module outside pair_semantics divides by a midpoint."""
    offenders = []
    for path in [*ROOT.glob("rupeebias_core/**/*.py"), *ROOT.glob("explorer/**/*.py"),
                 *ROOT.glob("pages/*.py")]:
        if path.name == "pair_semantics.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in (
                    "relative_gap", "pair_gap", "signed_gap", "_gap", "metric_value",
                    "difference_unit"):
                body = ast.unparse(node)
                if "/ 2" in body or "100_000" in body or '"pp"' in body:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert offenders == []
