"""The documentation holds together: the contract page keeps CONTRACT.md's numbering, and no link is broken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_contract_page_has_the_nine_sections_of_the_contract_in_order() -> None:
    headings = re.findall(r"^## (\d+)\. ", (ROOT / "docs" / "api.md").read_text(), flags=re.MULTILINE)

    assert headings == [str(number) for number in range(1, 10)]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file_and_every_anchor_at_a_heading(page: Path) -> None:
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        missing_anchor = bool(anchor) and linked.suffix == ".md" and linked.exists() and anchor not in anchors(linked)
        if not linked.exists() or missing_anchor:
            broken.append(target)

    assert broken == []


def anchors(page: Path) -> set[str]:
    """GitHub's anchors: a heading lower-cased, punctuation dropped, spaces turned into hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}
