"""Architecture rules of issue 19: `explorer/` reaches `precompute/` only through the endpoint
layer, the live package does not probe the project's own modules with getattr, and Δ% comes
from the core metrics (no re-implemented formula)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(REPO / "explorer").rglob("*.py"), *(REPO / "pages").glob("*.py"),
                  REPO / "app.py"])


def _precompute_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "precompute"]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "precompute":
                found += [f"precompute.{a.name}" for a in node.names]
            elif node.module.startswith("precompute."):
                found.append(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and str(arg.value).startswith("precompute"):
                found.append(str(arg.value))
    return found


def test_explorer_reaches_precompute_only_through_the_endpoint_layer() -> None:
    bad = {str(p.relative_to(REPO)): mods for p in SOURCES
           if (mods := [m for m in _precompute_imports(p) if m != "precompute.endpoint"])}
    assert bad == {}
    # The rule has teeth: the live package does use the layer.
    assert "precompute.endpoint" in _precompute_imports(REPO / "explorer/live/config.py")


def test_the_checker_sees_every_import_form(tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text("import precompute.client\nfrom precompute import serve_local\n"
                 "from precompute.collect import cache_key\n"
                 "importlib.import_module('precompute.store')\n")
    assert _precompute_imports(f) == ["precompute.client", "precompute.serve_local",
                                      "precompute.collect", "precompute.store"]


def test_no_getattr_probing_and_no_second_gap_formula() -> None:
    for path in (REPO / "explorer" / "live").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "getattr(serve_local" not in text, path
        assert "except ImportError" not in text, path
        assert "/ mid" not in text and "mid = (a + b)" not in text, path
    import numpy as np

    from explorer import live
    from rupeebias_core.metrics.pairs import relative_gap as core

    for a, b in [(600000.0, 540000.0), (-10.0, 30.0), (0.0, 0.0), (5.0, 5.0)]:
        want = float(core(np.array([a]), np.array([b]))[0])
        got = live.relative_gap(a, b)
        assert (np.isnan(want) and np.isnan(got)) or got == want


def test_live_is_a_small_package() -> None:
    pkg = REPO / "explorer" / "live"
    assert not (REPO / "explorer" / "live.py").exists()
    assert {p.name for p in pkg.glob("*.py")} >= {"__init__.py", "config.py", "ratelimit.py",
                                                    "probe.py"}
    page = (REPO / "pages" / "try_prompt.py").read_text(encoding="utf-8")
    assert "relative_gap(" not in page and "urlsplit" not in page  # the page is glue
