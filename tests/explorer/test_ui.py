"""explorer.ui: header help comes from the table registry, matched exactly; one source palette."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from explorer import charts, tables, ui, vocab
from rupeebias_core import registry


def test_help_is_the_registry_header_map() -> None:
    assert ui.HELP is registry.HEADER_HELP
    for header, text in registry.HEADER_HELP.items():
        assert ui.header_help(header) == text
    assert ui.header_help("Mean Δ%") == registry.table("delta").info("mean_delta").description
    assert ui.column_help("method") == registry.column_info("delta", "method").description
    assert ui.column_help("source_kind") == registry.DERIVED["source_kind"].description


def test_per_language_headers_name_their_column_exactly() -> None:
    mean_delta = registry.table("delta").info("mean_delta").description
    for group in vocab.GROUP_LABELS.values():
        assert ui.header_help(f"{group} Mean Δ%") == mean_delta
        assert ui.header_help(f"{group} CI low") == registry.INTERVAL
    assert vocab.GROUP_LABELS == tables.GROUP_LABELS  # the leaderboard's column groups


def test_no_substring_matching() -> None:
    # the old substring rule gave these the help of "CI", "Source" and "Mean Δ%"
    assert ui.header_help("CI excludes 0") == \
        registry.table("canonical_gaps").info("ci_excludes_zero").description
    assert ui.header_help("Sourced elsewhere") is None
    assert ui.header_help("Mean Δ% of something else") is None
    assert ui.header_help("English") is None


def _help(cfg: dict[str, object], header: str) -> object:
    entry = cfg[header]
    assert isinstance(entry, dict)
    return entry.get("help")


def test_column_config_carries_the_registry_tooltips() -> None:
    frame = pd.DataFrame({"CPG %": [1.5], "n pairs": [3], "Unknown header": ["x"]})
    cfg = ui.column_config(frame)
    assert _help(cfg, "CPG %") == registry.table("canonical_gaps").info("cpg").description
    assert _help(cfg, "n pairs") == registry.table("delta").info("n_pairs").description
    assert "Unknown header" not in cfg


def test_name_columns_are_as_wide_as_their_longest_name() -> None:
    """At a fixed 200 px the computed lane's "Qwen2.5-Coder-1.5B-Instruct (local)" was cut
    short. The width must hold the name in a font at least as wide as the grid's (Liberation
    Sans, Arial's metrics, is wider than Source Sans) with the cell's 8-px paddings."""
    from PIL import ImageFont

    font = ImageFont.truetype(
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf", 14) \
        if Path("/usr/share/fonts/truetype/liberation").is_dir() else None
    long_name = "Qwen2.5-Coder-1.5B-Instruct (local)"
    frame = pd.DataFrame({"Model": ["GPT 5.4", long_name], "Identifier": ["Jain", "Sikh"]})
    cfg = ui.column_config(frame)
    width = cfg["Model"]["width"]
    assert isinstance(width, int) and width > 200
    if font is not None:
        assert width >= font.getlength(long_name) + 16
    assert cfg["Identifier"]["width"] == 200
    assert cfg["Model"]["pinned"] is True
    assert ui.name_width(pd.Series(["x" * 200])) == ui.NAME_MAX_WIDTH


def _format(cfg: dict[str, object], header: str) -> object:
    entry = cfg[header]
    assert isinstance(entry, dict)
    return entry["type_config"].get("format")


def test_number_formats_are_the_grids_own_with_thousands_separators() -> None:
    """Digits and separators come from the column config (printf with ``,``, drawn by the
    grid: 12,345.68 and 1,234,567, checked in a browser screenshot), not a server-side
    Styler, and the frame goes to the grid as numbers, so sorting is numeric."""
    frame = pd.DataFrame({"Mean Δ%": [12345.678], "n pairs": [1234567.0], "ρ p-value": [0.5],
                          "PABAK": [0.9], "rank": [1]})
    cfg = ui.column_config(frame)
    assert _format(cfg, "Mean Δ%") == "%,.2f"
    assert _format(cfg, "n pairs") == "%,d"  # a count with a gap is a float column
    assert _format(cfg, "ρ p-value") == "%,.3f"
    assert _format(cfg, "PABAK") == "%,.4f"
    assert "rank" not in cfg


def test_source_colours_live_once() -> None:
    assert not hasattr(ui, "SOURCE_COLORS")
    scale = charts.source_scale().to_dict()
    assert scale["domain"] == [vocab.SOURCE_LABELS[k] for k in vocab.SOURCE_KINDS]
    assert scale["range"] == [vocab.SOURCE_COLORS[k] for k in vocab.SOURCE_KINDS]


def test_every_local_model_is_described_by_its_catalogue_sentence() -> None:
    """Issue 20: wherever a local model's numbers show, one sentence says what it is; the
    sentence lives once, in the local-model catalogue."""
    from streamlit.testing.v1 import AppTest

    from precompute import local_models

    qwen = local_models.get("qwen2.5-coder-1.5b-instruct")
    assert vocab.MODEL_NOTES[qwen.slug] == (
        "Qwen2.5-Coder-1.5B-Instruct is a 1.5B code-tuned instruction model, included because it "
        "follows the answer format, so that every raw-answer view works on a model whose answers "
        "can be read; it is not a model anyone should consult for salary advice.")
    assert vocab.SMOLLM_NOTE == local_models.get(vocab.SMOLLM_SLUG).note

    def page() -> None:
        import pandas as pd

        from explorer import ui

        models = pd.DataFrame({"model": ["qwen2.5-coder-1.5b-instruct", "gpt-5.4"],
                               "label": ["Qwen2.5-Coder-1.5B-Instruct (local)", "GPT 5.4"],
                               "note": ["", ""]})
        ui.model_notes(models, ["qwen2.5-coder-1.5b-instruct", "gpt-5.4"])

    at = AppTest.from_function(page).run()
    assert not at.exception
    assert [i.value for i in at.info] == [vocab.MODEL_NOTES[qwen.slug]]

    def both() -> None:
        import pandas as pd

        from explorer import ui

        models = pd.DataFrame({"model": ["qwen2.5-coder-1.5b-instruct", "smollm2-135m-instruct"],
                               "label": ["Qwen (local)", "SmolLM2 (bundled)"], "note": ["", ""]})
        ui.model_notes(models, list(models["model"]))

    at = AppTest.from_function(both).run()
    assert not at.exception
    assert [i.value for i in at.info] == [  # one box, a line per model
        f"- {vocab.MODEL_NOTES[qwen.slug]}\n- {vocab.SMOLLM_NOTE}"]


def _fake_parse_health(monkeypatch, health: pd.DataFrame
                       ) -> tuple[dict[str, object], list[str]]:
    """``parse_health`` served from ``health``: (the filters asked for, the warnings drawn)."""
    from explorer import data

    asked: dict[str, object] = {}

    def rows(table: str, **filters: object) -> pd.DataFrame:
        asked.update(table=table, **filters)
        return health
    warned: list[str] = []
    monkeypatch.setattr(data, "present", lambda table: True)
    monkeypatch.setattr(data, "rows", rows)
    monkeypatch.setattr(ui.st, "warning", lambda text, **kw: warned.append(text))
    return asked, warned


def test_thin_data_warns_only_for_the_rows_shown(monkeypatch) -> None:
    from explorer import data

    health = pd.DataFrame({"model": ["q", "q", "s"], "language": ["en", "hinglish", "en"],
                           "n_parsed": [132, 1, 4000], "n_rows": [4698, 4698, 4698]})
    asked, warned = _fake_parse_health(monkeypatch, health)
    ui.thin_data(["q", "s"], "corrected", ("en", "hinglish"), "salary_estimation",
                 {"q": "Qwen"}, "its changes rest", shown=[("q", "en"), ("s", "en")])
    assert asked["table"] == "parse_health" and asked["task"] == "salary_estimation"
    (text,) = warned
    # q's English row is thin; q's Hinglish row is not shown; s has 85 % usable
    assert "only 2.8 % of Qwen's English answers here" in text and "(132 of 4,698)" in text
    assert "Hinglish" not in text and "s's" not in text
    warned.clear()
    monkeypatch.setattr(data, "present", lambda table: False)  # an older data dir
    ui.thin_data(["q"], "corrected", "en", "salary_estimation", {}, "x")
    assert warned == []


def test_thin_data_over_several_use_cases_warns_once_per_model(monkeypatch) -> None:
    health = pd.DataFrame({"model": ["s", "s", "s", "q", "q"], "language": ["en"] * 5,
                           "task": ["service_pricing_client", "salary_estimation",
                                    "salary_increment_estimation", "salary_estimation",
                                    "salary_increment_estimation"],
                           "n_parsed": [28, 2089, 6970, 4000, 7000],
                           "n_rows": [1566, 4698, 7047, 4698, 7047]})
    asked, warned = _fake_parse_health(monkeypatch, health)
    tasks = ["salary_estimation", "salary_increment_estimation", "service_pricing_client"]
    ui.thin_data(["q", "s"], "upstream", "en", tasks, {"s": "Small"}, "its gaps there rest")
    assert asked["task"] == tuple(tasks)
    (text,) = warned
    # one paragraph for Small, its thin use cases in the page's order; q is not thin anywhere
    assert text.count("**Thin data:**") == 1 and "q's" not in text
    assert text.index("salary estimation 44.5 %") < text.index("service pricing (client) 1.8 %")
    # a use case the chart has no figure for (no usable answer at all) is not said to "rest"
    warned.clear()
    ui.thin_data(["q", "s"], "upstream", "en", tasks, {"s": "Small"}, "its gaps there rest",
                 shown_tasks={("s", "salary_estimation"), ("s", "salary_increment_estimation")})
    (text,) = warned
    assert "only 44.5 % of Small's salary estimation answers here" in text
    assert "service pricing" not in text
