"""Every chart on every page carries the press title block; Consistency keeps lanes unless the
reader asks to rank published and computed models together (``?together=yes``)."""

from __future__ import annotations

import json

import pytest

from explorer import export, vocab
from tests.explorer.conftest import charts, downloads, texts

PAGE_VIEWS = [("overview", {}), ("axes", {}), ("axes", {"view": "dots"}),
              ("axes", {"view": "heatmap"}), ("language", {}), ("identifiers", {}),
              ("identifiers", {"tab": "canonical"}), ("identifiers", {"tab": "largest"}),
              ("consistency", {}), ("consistency", {"tab": "quadrant"}),
              ("consistency", {"tab": "wording"}), ("consistency", {"tab": "merit"}),
              ("consistency", {"tab": "fairness"}), ("consistency", {"tab": "parse"}),
              ("pairs", {}), ("who", {})]


def _titles(at) -> list[dict]:
    return [json.loads(c.proto.spec).get("title") for c in charts(at)]


@pytest.mark.parametrize(("page", "query"), PAGE_VIEWS)
def test_every_chart_has_title_filters_source_and_date(open_page, page: str,
                                                       query: dict[str, str]) -> None:
    at = open_page(page, query)
    assert not at.exception, at.exception
    titles = _titles(at)
    for title in titles:
        assert isinstance(title, dict) and title["text"], title
        lines = title["subtitle"]  # the filters, then "source · date" (long lines wrapped)
        joined = " ".join(lines)
        assert len(lines) >= 2 and lines[0], title
        assert not lines[0].startswith(("Source:", "Computed with")), title  # filters first
        assert joined.endswith(export.today()), title
        assert ("Source: RupeeBias paper" in joined
                or "Computed with RupeeBias Explorer" in joined), title
    if page == "pairs" and titles:
        assert "In this one slot" in texts(at)  # the view's sentence
    if page == "identifiers":
        assert any(w in texts(at) for w in ("sits furthest from its axis average",
                                             "largest canonical gap", "widest gap here",
                                             "There is no"))
    if titles:
        labels = downloads(at)
        assert "Download chart data (CSV + source notes, ZIP)" in labels
        if export.can_render():
            assert {"Download chart (PNG)", "Download chart (SVG)"} <= set(labels)


def _w_titles(at) -> list[str]:
    return [t["text"] for t in _titles(at) if t and t["text"].startswith("Mean Kendall's W")]


def test_consistency_lanes_by_default_and_ranked_together_on_request(
        open_page, has_published: bool) -> None:
    at = open_page("consistency")
    lanes = _w_titles(at)
    want = [f"Mean Kendall's W (six axes) — {vocab.SOURCE_LABELS[k]}"
            for k in (vocab.SOURCE_KINDS if has_published else ("computed",))]
    assert lanes == want
    assert "Ranked together at your request" not in texts(at)
    together = open_page("consistency", {"together": "yes"})
    assert not together.exception
    if has_published:
        assert _w_titles(together) == [
            "Mean Kendall's W (six axes) — published and computed ranked together"]
        assert "Ranked together at your request" in texts(together)
        spec = json.loads(next(c.proto.spec for c in charts(together)
                               if "ranked together" in c.proto.spec))
        order = spec["layer"][0]["encoding"]["y"]["sort"]  # the ranking, as drawn
        assert any(vocab.SOURCE_LABELS["published"] in r for r in order)
        assert any(vocab.SOURCE_LABELS["computed"] in r for r in order)
    else:
        assert _w_titles(together) == want  # nothing to mix: the one lane stays


def test_the_ranking_agreement_is_a_heat_table_with_its_chart_downloads(open_page) -> None:
    """Language shift draws its ρ heatmap as a table of coloured cells (explorer.heat); it
    carries the title block a chart does and offers the Vega heatmap as PNG/SVG."""
    at = open_page("language")
    assert not at.exception, at.exception
    tables = [h.proto.body for h in at.get("html") if 'class="rb-heat"' in h.proto.body]
    assert len(tables) == 1
    body = tables[0]
    assert "Do English and Hinglish rank identities the same way? (Spearman ρ)" in body
    assert f"· {export.today()}</div>" in body and "Computed with RupeeBias Explorer" in body
    assert body.count("<td style=\"background:#") >= 7  # every axis of at least one model
    assert not any("rank identities the same way" in c.proto.spec for c in charts(at))
    labels = downloads(at)
    assert labels.count("Download chart data (CSV + source notes, ZIP)") == len(charts(at)) + 1
    if export.can_render():
        assert labels.count("Download chart (PNG)") == len(charts(at)) + 1
