"""The implementation notes (docs/methodology.md) cut into sections for the Methodology page,
which shows one lazily loaded box per section instead of 100 KB of Markdown at once."""

from __future__ import annotations

import re

_HEADING = re.compile(r"^(#{2,3}) (.+)$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def note_sections(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The notes' preamble and their sections as (label, body): one per ``##`` and ``###``
    heading, in order (lines inside fenced code never count as headings). A subsection whose
    heading has no number of its own is labelled with its section's (``2 · Base profiles``), so
    the labels read as a table of contents."""
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    number, fenced = "", False
    for line in text.removeprefix("# Methodology").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        found = None if fenced else _HEADING.match(line)
        if found is None:
            (sections[-1][1] if sections else preamble).append(line)
            continue
        level, heading = found.group(1), found.group(2).strip()
        if level == "##":
            number = heading.split(" ", 1)[0].rstrip(".")
            label = heading
        else:
            label = heading if heading[:1].isdigit() else f"{number} · {heading}"
        sections.append((label, []))
    return ("\n".join(preamble).strip(),
            [(label, "\n".join(body).strip()) for label, body in sections])
