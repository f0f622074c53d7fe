"""Tests for ``precompute.published``.

The paper-facing tests regex-parse the table lines of ``RupeeBias-paper.md`` (and the README
Table 2 and model table of ``upstream-spec.md``) on their own, without using the transcription
in ``precompute/published_src``, and compare every transcribed value with them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from precompute import published

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("RUPEEBIAS_SHARED") or REPO.parent / "shared")
PAPER = SHARED / "seed" / "RupeeBias-paper.md"
SPEC = SHARED / "reference" / "upstream-spec.md"
COMMITTED = REPO / "data" / "published"
CONTRACT = REPO / "docs" / "data-format.md"

# This test's own display-name -> slug map (independent of published_src/models.csv).
SLUGS = {
    "Claude Opus 4.7": "claude-opus-4.7", "Claude Haiku 4.5": "claude-haiku-4.5",
    "GPT 5.4": "gpt-5.4", "GPT 5.4-mini": "gpt-5.4-mini", "Gemini 3 Flash": "gemini-3-flash",
    "Kimi K2.5": "kimi-k2.5", "DeepSeek V3.2": "deepseek-v3.2", "GLM 5.1": "glm-5.1",
    "Sarvam 105B": "sarvam-105b", "Axis mean": "all",
}
AXES = ["Religion", "Caste", "Region", "Gender", "Disability", "Urban/Rural"]
MODEL_TABLES = ("leaderboard", "delta", "kendall_w", "qv_robustness", "parse_health",
                "fairness_ablation", "models")
SARVAM_PHRASE = "no salary_increment_estimation runs"

NUM = r"-?\d+\.\d+"
CI_COMMA = re.compile(rf"({NUM})\s*\[({NUM}), ({NUM})\]")       # 8.1[8.1, 8.2]
CI_DASH = re.compile(rf"({NUM})(\\checkmark)?\[({NUM})–({NUM})\]")  # 0.651[0.50–0.78]
W_CELL = re.compile(rf"({NUM})(\\dagger)?")                       # 0.182\dagger


# --------------------------------------------------------------------------------------------
# fixtures and helpers


def _lines(path: Path) -> list[str]:
    if not path.exists():
        pytest.skip(f"{path} not found: set RUPEEBIAS_SHARED to the shared/ folder "
                    "holding seed/RupeeBias-paper.md and reference/upstream-spec.md")
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def paper() -> list[str]:
    return _lines(PAPER)


@pytest.fixture(scope="module")
def spec() -> list[str]:
    return _lines(SPEC)


@pytest.fixture(scope="module")
def built() -> dict[str, pa.Table]:
    return published.build_tables()


def rows(table: pa.Table, **where: Any) -> list[dict[str, Any]]:
    return [r for r in table.to_pylist() if all(r[k] == v for k, v in where.items())]


def one(table: pa.Table, **where: Any) -> dict[str, Any]:
    found = rows(table, **where)
    assert len(found) == 1, f"expected one row for {where}, found {len(found)}"
    return found[0]


def table_block(lines: list[str], number: int) -> tuple[str, list[str]]:
    """Header line and body lines of the paper's 'Table N:' (plain-text table layout)."""
    starts = [i for i, line in enumerate(lines) if line.startswith(f"Table {number}: ")]
    assert len(starts) == 1, f"caption of Table {number} not found exactly once"
    i = starts[0] + 1
    while not lines[i].strip():
        i += 1
    body = []
    for line in lines[i + 1:]:
        if not line.strip() or line.startswith(("Table", "!", "Figure", "#", "(")):
            break
        body.append(line)
    return lines[i], body


def split_label(line: str) -> tuple[str, str]:
    """Split a body line into its row label (a known model or 'Axis mean') and the rest."""
    for label in sorted(SLUGS, key=len, reverse=True):
        if line.startswith(label + " "):
            return label, line[len(label) + 1:]
    raise AssertionError(f"unknown row label in {line!r}")


def cells(pattern: re.Pattern[str], text: str, n: int) -> list[tuple[str, ...]]:
    found = pattern.findall(text)
    assert len(found) == n, f"expected {n} cells in {text!r}, found {len(found)}"
    assert not pattern.sub("", text).strip(), f"unparsed text left in {text!r}"
    return found


def axes_of(header: str) -> list[str]:
    """Column axes from a header such as 'Model Religion ... Urban/Rural Mean W'."""
    assert header.startswith("Model ")
    rest = header[len("Model "):].replace("Mean min \\rho", "Mean").replace("Mean W", "Mean")
    axes = rest.split()
    assert set(axes) <= {*AXES, "Mean"}, axes
    return axes


def assert_values(row: dict[str, Any], **expected: str | None) -> None:
    """Compare a row's numbers with printed strings (None: must be null)."""
    for column, text in expected.items():
        want = None if text is None else float(text)
        assert row[column] == want, f"{column}: {row[column]!r} != printed {text!r} in {row}"


# --------------------------------------------------------------------------------------------
# checks against the paper (plain functions, so a corrupted build can be fed to them)


def check_table_2(paper: list[str], built: dict[str, pa.Table]) -> None:
    header, body = table_block(paper, 2)
    assert header == ("Model Overall Mean \\Delta\\%English Mean \\Delta\\%Hinglish Mean "
                      "\\Delta\\%English V@10%Hinglish V@10%")
    assert len(body) == 9
    for name in ("leaderboard", "delta"):
        table = built[name]
        assert len(rows(table, source="published: Table 2")) == 27
        for line in body:
            label, rest = split_label(line)
            overall, en, hi, v_en, v_hi = cells(CI_COMMA, rest, 5)
            for lang, md, v10 in (("en", en, v_en), ("hinglish", hi, v_hi),
                                  ("all", overall, None)):
                row = one(table, source="published: Table 2", model=SLUGS[label],
                          language=lang, task="all", axis="all")
                assert_values(row, mean_delta=md[0], mean_delta_lo=md[1], mean_delta_hi=md[2],
                              violation_10=v10 and v10[0], violation_10_lo=v10 and v10[1],
                              violation_10_hi=v10 and v10[2], n_pairs=None, n_violations=None)


def check_table_2_readme(spec: list[str], built: dict[str, pa.Table]) -> None:
    start = next(i for i, line in enumerate(spec) if "Published Table 2, as printed in the README"
                 in line)
    table_lines = [line for line in spec[start + 1:start + 16] if line.startswith("| ")]
    assert table_lines[0].startswith("| Model | Overall Mean Δ% | English Mean Δ% | Hinglish")
    body = [line for line in table_lines[1:] if not line.startswith("|---")]
    assert len(body) == 9
    source = "published: Table 2 (authors README, 2 dp)"
    for name in ("leaderboard", "delta"):
        table = built[name]
        assert len(rows(table, source=source)) == 27
        for line in body:
            parts = [p.strip() for p in line.strip().strip("|").split("|")]
            overall, en, hi, v_en, v_hi = (cells(CI_COMMA, p, 1)[0] for p in parts[1:])
            for lang, md, v10 in (("en", en, v_en), ("hinglish", hi, v_hi),
                                  ("all", overall, None)):
                row = one(table, source=source, model=SLUGS[parts[0]], language=lang,
                          task="all", axis="all")
                assert_values(row, mean_delta=md[0], mean_delta_lo=md[1], mean_delta_hi=md[2],
                              violation_10=v10 and v10[0], violation_10_lo=v10 and v10[1],
                              violation_10_hi=v10 and v10[2], n_pairs=None)


def check_tables_3_4(paper: list[str], built: dict[str, pa.Table]) -> None:
    for number, lang in ((3, "en"), (4, "hinglish")):
        header, body = table_block(paper, number)
        axes = axes_of(header)
        assert sorted(axes) == sorted(AXES) and len(body) == 9
        source = f"published: Table {number}"
        assert len(rows(built["delta"], source=source)) == 54
        for line in body:
            label, rest = split_label(line)
            for axis, (m, lo, hi) in zip(axes, cells(CI_COMMA, rest, 6), strict=True):
                row = one(built["delta"], source=source, model=SLUGS[label], language=lang,
                          task="all", axis=axis)
                assert_values(row, mean_delta=m, mean_delta_lo=lo, mean_delta_hi=hi,
                              violation_10=None, n_pairs=None)


def check_tables_5_6(paper: list[str], built: dict[str, pa.Table]) -> None:
    for number, lang in ((5, "en"), (6, "hinglish")):
        header, body = table_block(paper, number)
        axes = axes_of(header)
        assert len(axes) == 7 and len(body) == 9
        source = f"published: Table {number}"
        assert len(rows(built["kendall_w"], source=source)) == 63
        for line in body:
            label, rest = split_label(line)
            for axis, (w, dagger) in zip(axes, cells(W_CELL, rest, 7), strict=True):
                row = one(built["kendall_w"], source=source, model=SLUGS[label],
                          language=lang, axis=axis)
                assert_values(row, w=w, p_value=None, p_bh=None)
                assert row["significant"] is bool(dagger), row


def check_tables_7_8(paper: list[str], built: dict[str, pa.Table]) -> None:
    for number, lang in ((7, "en"), (8, "hinglish")):
        header, body = table_block(paper, number)
        axes = axes_of(header)
        assert len(axes) == 7 and len(body) == 10
        source = f"published: Table {number}"
        assert len(rows(built["qv_robustness"], source=source)) == 70
        for line in body:
            label, rest = split_label(line)
            for axis, (rho, tick, lo, hi) in zip(axes, cells(CI_DASH, rest, 7), strict=True):
                row = one(built["qv_robustness"], source=source, model=SLUGS[label],
                          language=lang, axis=axis)
                assert_values(row, min_rho=rho, min_rho_lo=lo, min_rho_hi=hi)
                assert row["robust"] is bool(tick), row


def check_table_22(paper: list[str], built: dict[str, pa.Table]) -> None:
    header, body = table_block(paper, 22)
    assert header == "Model Parse Health (%)Refusal Rate (%)"
    assert len(body) == 9
    assert len(built["parse_health"]) == 9
    for line in body:
        label, rest = split_label(line)
        health, refusal = re.fullmatch(rf"({NUM}) ({NUM})", rest).groups()
        row = one(built["parse_health"], source="published: Table 22", model=SLUGS[label],
                  language="all", task="all")
        assert_values(row, parse_health=health, refusal_rate=refusal, n_rows=None)


CHECKS = [check_table_2, check_tables_3_4, check_tables_5_6, check_tables_7_8, check_table_22]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_paper_tables(check: Any, paper: list[str], built: dict[str, pa.Table]) -> None:
    check(paper, built)


def test_readme_table_2(spec: list[str], built: dict[str, pa.Table]) -> None:
    check_table_2_readme(spec, built)


@pytest.mark.parametrize("file, column, row_index", [
    ("table_03.csv", "mean_delta", 17), ("table_07.csv", "min_rho_lo", 40),
    ("table_05.csv", "significant", 55), ("table_02_readme.csv", "violation_10_hi", 10),
])
def test_a_typo_is_caught(tmp_path: Path, paper: list[str], spec: list[str], file: str,
                          column: str, row_index: int) -> None:
    """Corrupt one transcribed cell: the paper checks must then fail."""
    src = tmp_path / "src"
    shutil.copytree(published.SRC_DIR, src)
    lines = (src / file).read_text(encoding="utf-8").splitlines()
    head = lines[0].split(",")
    fields = lines[row_index + 1].split(",")
    col = head.index(column)
    flip = {"true": "false", "false": "true"}
    fields[col] = flip.get(fields[col]) or f"{float(fields[col]) + 0.01:.2f}"
    lines[row_index + 1] = ",".join(fields)
    (src / file).write_text("\n".join(lines) + "\n", encoding="utf-8")
    corrupted = published.build_tables(src_dir=src)
    with pytest.raises(AssertionError):
        if file == "table_02_readme.csv":
            check_table_2_readme(spec, corrupted)
        else:
            for check in CHECKS:
                check(paper, corrupted)


def test_table_1_dataset_composition(paper: list[str], built: dict[str, pa.Table]) -> None:
    header, body = table_block(paper, 1)
    assert header == "Use case Identifiers Base profiles Question variants Languages Prompts"
    assert len(body) == 6
    table = built["dataset_composition"]
    assert table.num_rows == 6
    parsed = {}
    for line in body[:-1]:
        m = re.fullmatch(r"(.+?) (\d+) (\d+) (\d+) (\d+) ([\d,]+)", line)
        assert m, line
        parsed[m.group(1)] = [int(g.replace(",", "")) for g in m.groups()[1:]]
    total = re.fullmatch(r"Total––––([\d,]+)", body[-1])
    assert total, body[-1]
    for row in table.to_pylist():
        if row["task"] == "all":
            assert row["use_case"] == "Total"
            assert row["n_prompts"] == int(total.group(1).replace(",", ""))
            assert row["n_identifiers"] is row["n_profiles"] is row["n_languages"] is None
            continue
        assert [row["n_identifiers"], row["n_profiles"], row["n_question_variants"],
                row["n_languages"], row["n_prompts"]] == parsed.pop(row["use_case"])
    assert not parsed


def test_tables_14_19_20_human_validation(paper: list[str], built: dict[str, pa.Table]) -> None:
    table = built["human_validation"]
    header, body = table_block(paper, 14)
    assert header == "Question Yes Mostly yes / Partially No"
    for line in body:
        m = re.fullmatch(r"(Q\d\. .+?) (\d+) (\d+) (\d+)", line)
        assert m, line
        for rating, n in zip(("Yes", "Mostly yes / Partially", "No"), m.groups()[1:],
                             strict=True):
            row = one(table, source="published: Table 14", criterion=m.group(1), rating=rating)
            assert row["n"] == int(n) and row["pct"] is None
    header, body = table_block(paper, 19)
    assert header == "Validation criterion Acceptable Minor issues Not acceptable"
    for line in body:
        m = re.fullmatch(r"(.+?) (\d+) \((\d+\.\d+)%\)(\d+) \((\d+\.\d+)%\)(\d+) \((\d+\.\d+)%\)",
                         line)
        assert m, line
        g = m.groups()
        for rating, n, pct in (("Acceptable", g[1], g[2]), ("Minor issues", g[3], g[4]),
                               ("Not acceptable", g[5], g[6])):
            row = one(table, source="published: Table 19", criterion=g[0], rating=rating)
            assert row["n"] == int(n) and row["pct"] == float(pct)
    header, body = table_block(paper, 20)
    assert header == "Validation criterion PABAK"
    for line in body:
        criterion, value = re.fullmatch(r"(.+) (\d\.\d{4})", line).groups()
        row = one(table, source="published: Table 20", criterion=criterion)
        assert row["pabak"] == float(value) and row["n"] is None
    assert Counter(table.column("source").to_pylist()) == {
        "published: Table 14": 6, "published: Table 19": 9, "published: Table 20": 3}


def test_appendix_e_fairness_ablation(paper: list[str], built: dict[str, pa.Table]) -> None:
    text = "\n".join(paper)
    m = re.search(r"Sarvam 105B \((\d+\.\d)\\rightarrow (\d+\.\d), (-\d+\.\d) points, "
                  r"(\d+)% relative reduction\)", text)
    assert m, "Appendix E Sarvam sentence not found"
    table = built["fairness_ablation"]
    assert table.num_rows == 18
    sarvam = one(table, model="sarvam-105b", language="en")
    assert_values(sarvam, std_mean_delta=m.group(1), fair_mean_delta=m.group(2),
                  delta=m.group(3), reduction_pct=m.group(4))
    numeric = ("std_mean_delta", "fair_mean_delta", "delta", "reduction_pct", "n_pairs_std",
               "n_pairs_fair")
    for row in table.to_pylist():
        assert row["source"] == "published: Appendix E text"
        if row is not sarvam and (row["model"], row["language"]) != ("sarvam-105b", "en"):
            assert all(row[c] is None for c in numeric), row
        assert row["note"], row
    # Directions come from the text's own statements.
    assert "Two models fail to benefit in English: DeepSeek V3.2" in text
    assert "GLM 5.1 is the only model for which the fairness instruction backfires in Hinglish" \
        in text
    increased = {(r["model"], r["language"]) for r in table.to_pylist()
                 if r["direction"] == "increased"}
    assert increased == {("deepseek-v3.2", "en"), ("glm-5.1", "en"), ("glm-5.1", "hinglish")}


def test_models_match_spec_section_8(spec: list[str], built: dict[str, pa.Table]) -> None:
    start = next(i for i, line in enumerate(spec) if line.startswith("* **Models** (MODEL_CARD"))
    pattern = re.compile(
        r"\s*\| (\S+) \| (\S+) \| (.+?) \| (open|closed) \| ([\d.]+) \| ([\d.]+) \|")
    found = [m for line in spec[start:start + 16] if (m := pattern.fullmatch(line))]
    assert len(found) == 9
    table = built["models"]
    assert table.num_rows == 9
    for m in found:
        slug, provider, access, weights, price_in, price_out = m.groups()
        row = one(table, model=slug)
        assert (row["provider_id"], row["weights"]) == (provider, weights)
        assert row["access"] == access.replace("`", "")
        assert_values(row, price_in_usd_per_m=price_in, price_out_usd_per_m=price_out)
    names_line = next(line for line in spec if line.startswith("The README notes that Gemini"))
    names = names_line.split("Display names: ")[1].rstrip(".").split(", ")
    assert {SLUGS[n]: n for n in names} == dict(zip(table.column("model").to_pylist(),
                                                    table.column("label").to_pylist(),
                                                    strict=True))


def test_sarvam_fact_is_in_the_spec_and_on_every_sarvam_row(spec: list[str],
                                                            built: dict[str, pa.Table]) -> None:
    assert any("sarvam-105b has no salary_increment_estimation runs" in line for line in spec)
    for name in MODEL_TABLES:
        sarvam = rows(built[name], model="sarvam-105b")
        assert sarvam, name
        for row in sarvam:
            assert row["note"] and SARVAM_PHRASE in row["note"], (name, row)
        others = [r for r in built[name].to_pylist() if r["model"] != "sarvam-105b"]
        assert not any(SARVAM_PHRASE in (r["note"] or "") for r in others), name


# --------------------------------------------------------------------------------------------
# the files


def test_committed_files_are_exactly_the_built_tables(built: dict[str, pa.Table]) -> None:
    assert sorted(p.name for p in COMMITTED.iterdir() if p.suffix == ".parquet") == \
        sorted(f"{name}.parquet" for name in built)
    for name, table in built.items():
        committed = pq.read_table(COMMITTED / f"{name}.parquet")
        assert committed.schema.equals(published.SCHEMAS[name], check_metadata=True), name
        assert committed.equals(table, check_metadata=True), f"{name}.parquet is stale"


def test_committed_files_are_byte_identical_to_a_rebuild(built: dict[str, pa.Table]) -> None:
    for name, table in built.items():
        path = COMMITTED / f"{name}.parquet"
        writer = pq.ParquetFile(path).metadata.created_by
        if writer != f"parquet-cpp-arrow version {pa.__version__}":
            pytest.skip(f"{path.name} was written by {writer!r}; this is pyarrow "
                        f"{pa.__version__}, so bytes cannot match (content is checked above)")
        assert path.read_bytes() == published.parquet_bytes(table), \
            f"{name}.parquet differs: run `python -m precompute published`"


def test_cli_rebuild_is_deterministic(tmp_path: Path) -> None:
    out = tmp_path / "published"
    assert published.main(argparse.Namespace(out=out, check=False)) == 0
    first = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert published.main(argparse.Namespace(out=out, check=True)) == 0
    shutil.rmtree(out)
    assert published.main(argparse.Namespace(out=out, check=False)) == 0
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir())} == first
    (out / "kendall_w.parquet").write_bytes(b"stale")
    assert published.main(argparse.Namespace(out=out, check=True)) == 1


def test_every_row_names_its_table_and_method(built: dict[str, pa.Table]) -> None:
    allowed = re.compile(r"published: (Table (1|2|3|4|5|6|7|8|14|19|20|22)"
                         r"|Table 2 \(authors README, 2 dp\)|Appendix E text"
                         r"|MODEL_CARD model table \(upstream spec §8\))")
    for name, table in built.items():
        assert table.num_rows
        for source in set(table.column("source").to_pylist()):
            assert allowed.fullmatch(source), (name, source)
        assert set(table.column("method").to_pylist()) == {"upstream"}, name
        assert "note" in table.schema.names, name


def _contract_columns() -> dict[str, set[str]]:
    """Column names the contract lists for each metric table (docs/data-format.md)."""
    text = CONTRACT.read_text(encoding="utf-8")
    section = text.split("## Metric tables", 1)[1]
    columns: dict[str, set[str]] = {}
    for bullet in re.split(r"\n\* ", section)[1:]:
        m = re.match(r"`(\w+)\.parquet`", bullet)
        if not m:
            continue
        names: set[str] = set()
        for span in re.findall(r"`([^`]+)`", bullet)[1:]:
            for part in re.sub(r"\([^)]*\)", "", span).split(","):
                if re.fullmatch(r"[a-z][a-z0-9_]*", part.strip()):
                    names.add(part.strip())
        columns[m.group(1)] = names - {"all", "en", "hinglish", "upstream", "computed"}
    columns["leaderboard"] = (columns["leaderboard"] - {"delta"}) | columns["delta"]
    return columns


def test_column_names_follow_the_contract(built: dict[str, pa.Table]) -> None:
    contract = _contract_columns()
    for name in MODEL_TABLES:
        expected = contract[name]
        assert len(expected) >= 5, (name, expected)
        missing = expected - set(built[name].schema.names)
        assert not missing, f"{name}: contract columns missing {sorted(missing)}"
        assert {"model", "source", "method", "note"} <= set(built[name].schema.names)


def test_keys_unique_sorted_and_one_preferred_row(built: dict[str, pa.Table]) -> None:
    keys = {"leaderboard": ("model", "language", "task", "axis", "source"),
            "delta": ("model", "language", "task", "axis", "source"),
            "kendall_w": ("model", "language", "axis"),
            "qv_robustness": ("model", "language", "axis"),
            "parse_health": ("model", "language", "task"),
            "fairness_ablation": ("model", "language"), "models": ("model",)}
    for name, key in keys.items():
        seen = [tuple(r[k] for k in key) for r in built[name].to_pylist()]
        assert len(seen) == len(set(seen)), name
    order = [*SLUGS.values()]
    for name in MODEL_TABLES:
        models = built[name].column("model").to_pylist()
        assert models == sorted(models, key=order.index), name
    for name in ("leaderboard", "delta"):
        counts = Counter((r["model"], r["language"], r["task"], r["axis"])
                         for r in built[name].to_pylist() if r["preferred"])
        cells_ = {(r["model"], r["language"], r["task"], r["axis"])
                  for r in built[name].to_pylist()}
        assert set(counts) == cells_ and set(counts.values()) == {1}, name
        for r in rows(built[name], axis="all"):
            assert r["preferred"] is (r["source"] == "published: Table 2 (authors README, 2 dp)")


# --------------------------------------------------------------------------------------------
# paper-internal consistency of the transcription (documented in docs/published.md)


def test_paper_1dp_table_2_is_half_up_rounding_of_readme_2dp(built: dict[str, pa.Table]) -> None:
    table = built["leaderboard"]
    columns = ("mean_delta", "mean_delta_lo", "mean_delta_hi", "violation_10",
               "violation_10_lo", "violation_10_hi")
    ties = 0
    for paper_row in rows(table, source="published: Table 2"):
        readme = one(table, source="published: Table 2 (authors README, 2 dp)",
                     model=paper_row["model"], language=paper_row["language"])
        for c in columns:
            if paper_row[c] is None:
                assert readme[c] is None
                continue
            two = Decimal(repr(readme[c]))
            assert Decimal(repr(paper_row[c])) == two.quantize(Decimal("0.1"), ROUND_HALF_UP), \
                (paper_row["model"], paper_row["language"], c)
            ties += two.quantize(Decimal("0.01")) % Decimal("0.1") == Decimal("0.05")
    assert ties == 12  # the .x5 cells, listed in docs/published.md


def test_headline_20_2_is_mean_of_overall(built: dict[str, pa.Table]) -> None:
    overall = [r["mean_delta"] for r in rows(built["leaderboard"], language="all",
                                             source="published: Table 2 (authors README, 2 dp)")]
    assert len(overall) == 9 and round(sum(overall) / 9, 1) == 20.2


def test_means_flags_and_intervals_are_internally_consistent(built: dict[str, pa.Table]) -> None:
    for r in built["qv_robustness"].to_pylist():
        assert r["robust"] is (r["min_rho"] >= 0.85), r
        assert r["min_rho_lo"] <= r["min_rho"] <= r["min_rho_hi"], r
    for r in built["delta"].to_pylist():
        assert r["mean_delta_lo"] <= r["mean_delta"] <= r["mean_delta_hi"], r
        if r["violation_10"] is not None:
            assert r["violation_10_lo"] <= r["violation_10"] <= r["violation_10_hi"], r
    for name, column, tolerance in (("kendall_w", "w", 0.0005),
                                    ("qv_robustness", "min_rho", 0.0005)):
        table = built[name]
        for model, lang in {(r["model"], r["language"]) for r in table.to_pylist()}:
            per_axis = {r["axis"]: r[column] for r in rows(table, model=model, language=lang)}
            mean = sum(per_axis[a] for a in AXES) / 6
            assert abs(mean - per_axis["Mean"]) <= tolerance + 1e-12, (name, model, lang)
    assert all(r["significant"] for r in rows(built["kendall_w"], axis="Mean"))


def test_table_1_and_19_arithmetic(built: dict[str, pa.Table]) -> None:
    comp = built["dataset_composition"].to_pylist()
    for r in comp[:-1]:
        assert r["n_prompts"] == (r["n_identifiers"] * r["n_profiles"]
                                  * r["n_question_variants"] * r["n_languages"])
    assert comp[-1]["n_prompts"] == sum(r["n_prompts"] for r in comp[:-1]) == 39150
    for r in rows(built["human_validation"], source="published: Table 19"):
        assert round(r["n"] / 116 * 100, 2) == r["pct"], r
