"""RupeeBias Explorer — entry point and router: ``streamlit run serve.py`` (which serves this
file; ``streamlit run app.py`` works too, a little slower on deep links: see serve.py).

The entrypoint only sets the page frame and navigation; each page is a file in ``pages/``.
Every ``url_path`` equals its file's stem: on a fresh server Streamlit serves a deep link from
the ``pages/`` folder before ``st.navigation`` has ever run, and matching names let
:func:`explorer.ui.ensure_router` hand the request back to this router (see that function).
Data comes from ``data/`` beside this file, or ``$RUPEEBIAS_DATA_DIR``; nothing here needs the
network or an API key (the Try-a-prompt page asks for an endpoint only when used).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from explorer import heap
from explorer.ui import routed

# An image, not the text "₹": Streamlit takes a string that is not an emoji for an image URL,
# so every page load asked the server for "/₹" and got the app's HTML as its icon.
st.set_page_config(page_title="RupeeBias Explorer",
                   page_icon=str(Path(__file__).parent / "explorer" / "assets" / "favicon.svg"),
                   layout="wide",
                   menu_items={"About": "RupeeBias Explorer: audits demographic bias in the "
                                        "economic advice language models give people in India."})

# The default page is served at "/"; its url_path must differ from the alias's "overview".
OVERVIEW = st.Page("pages/overview.py", title="Overview", icon=":material/leaderboard:",
                   url_path="home", default=True)


def _overview_alias() -> None:
    """``/overview``: the default page lives at ``/``; an old or hand-typed ``/overview`` link
    is sent there with its query parameters instead of Streamlit's "Page not found" dialog."""
    st.switch_page(OVERVIEW, query_params={k: st.query_params.get_all(k)
                                           for k in st.query_params})


PAGES = {
    "Results": [
        OVERVIEW,
        st.Page("pages/who_gets_less.py", title="Who gets less", icon=":material/balance:",
                url_path="who_gets_less"),
        st.Page("pages/axes_use_cases.py", title="Axes & use cases",
                icon=":material/radar:", url_path="axes_use_cases"),
        st.Page("pages/language_shift.py", title="Language shift", icon=":material/translate:",
                url_path="language_shift"),
        st.Page("pages/identifiers.py", title="Identifiers", icon=":material/groups:",
                url_path="identifiers"),
        st.Page("pages/consistency.py", title="Consistency & robustness",
                icon=":material/stacked_line_chart:", url_path="consistency"),
    ],
    "Drill down": [
        st.Page("pages/pair_browser.py", title="Pair browser", icon=":material/compare_arrows:",
                url_path="pair_browser"),
        st.Page("pages/try_prompt.py", title="Try a prompt", icon=":material/science:",
                url_path="try_prompt"),
    ],
    "About": [
        st.Page("pages/methodology.py", title="Methodology", icon=":material/menu_book:",
                url_path="methodology"),
        st.Page(_overview_alias, title="Overview (old link)", url_path="overview",
                visibility="hidden"),
    ],
}

page = st.navigation(PAGES)
# Wide, fixed-width charts (faceted radars, small multiples) and long formulas scroll inside
# their own box on a narrow screen instead of widening the whole page.
st.html("<style>[data-testid='stVegaLiteChart'], [data-testid='stFullScreenFrame'] "
        "{max-width: 100%; overflow-x: auto;} "
        ".katex-display, [data-testid='stMarkdownContainer'] .katex {max-width: 100%; "
        "overflow-x: auto; overflow-y: hidden; display: inline-block;} "
        "[data-testid='stMarkdownContainer'] table {display: block; max-width: 100%; "
        "overflow-x: auto;} "
        "[data-testid='stMarkdownContainer'] code {white-space: pre-wrap; "
        "overflow-wrap: anywhere;} "
        # ui.verbatim: exact prompts and answers as a monospace block that keeps line breaks
        "[data-testid='stText'], [data-testid='stText'] span {white-space: pre-wrap; "
        "overflow-wrap: anywhere; font-family: 'Source Code Pro', monospace; "
        "font-size: 0.85rem;} "
        "[data-testid='stText'] {background: rgba(151, 166, 195, 0.15); width: 100%; "
        "box-sizing: border-box; border-radius: 0.5rem; padding: 0.75rem 1rem;} "
        # explorer.heat: a heatmap as a table; it scrolls in its own box on a phone
        ".rb-heat {font-size: 0.85rem;} .rb-heat-title {font-weight: 600;} "
        ".rb-heat-sub {font-size: 0.75rem; opacity: 0.75;} "
        ".rb-scroll {max-width: 100%; overflow-x: auto; margin: 0.5rem 0;} "
        ".rb-heat table {border-collapse: collapse;} "
        ".rb-heat th {font-weight: 600; padding: 0.25rem 0.5rem; text-align: left;} "
        ".rb-heat tbody th {min-width: 10rem;} "  # a phone wraps a model name, not per word
        ".rb-heat td {padding: 0.25rem 0.5rem; min-width: 3.5rem; text-align: center; "
        "font-variant-numeric: tabular-nums;} "
        ".rb-heat-key {display: flex; gap: 0.5rem; align-items: center; font-size: 0.75rem;} "
        ".rb-heat-ramp {display: inline-block; width: 8rem; height: 0.6rem;}</style>")
with st.sidebar:
    st.caption("**RupeeBias Explorer** · numbers marked *Published* are transcribed from the "
               "RupeeBias paper; *Computed* ones were computed here from raw model answers. "
               "Gaps describe model behaviour, not the worth of any group.")
with routed():
    page.run()
heap.settle(page.url_path)  # after the page's first run: see explorer.heap
