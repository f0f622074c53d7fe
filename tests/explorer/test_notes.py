"""explorer.notes: the Methodology page's table of contents of docs/methodology.md."""

from __future__ import annotations

from explorer.notes import note_sections
from tests.explorer.conftest import REPO

DOC = """# Methodology

Intro line.

## 1. First

Body one.

## 2. Second

Intro of two.

### Base profiles

Profiles.

```text
### 600000 INR
## not a heading either
```

### 2.5 Numbered

Last.
"""


def test_sections_labels_bodies_and_fences() -> None:
    preamble, sections = note_sections(DOC)
    assert preamble == "Intro line."
    assert [label for label, _ in sections] == [
        "1. First", "2. Second", "2 · Base profiles", "2.5 Numbered"]
    body = dict(sections)
    assert body["1. First"] == "Body one."
    assert "### 600000 INR" in body["2 · Base profiles"]  # fenced: text, not a section
    assert body["2.5 Numbered"] == "Last."


def test_the_shipped_notes_lose_no_line() -> None:
    """Every non-blank line of docs/methodology.md is a section heading or in a body."""
    text = (REPO / "docs" / "methodology.md").read_text(encoding="utf-8")
    preamble, sections = note_sections(text)
    assert len(sections) >= 20
    lines = [ln for ln in text.removeprefix("# Methodology").splitlines() if ln.strip()]
    kept = [ln for part in (preamble, *(b for _, b in sections)) for ln in part.splitlines()
            if ln.strip()]
    assert len(kept) + len(sections) == len(lines)
