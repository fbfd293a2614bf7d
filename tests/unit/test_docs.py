"""The documentation holds together: the contract page keeps CONTRACT.md's numbering, no link is broken, the
architecture's tree is the layer's modules, every source file a page names exists, and "shape" keeps the one
meaning the glossary gives it."""

from __future__ import annotations

import os
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


def test_the_architecture_tree_names_every_module_of_the_layer_and_nothing_else() -> None:
    """docs/architecture.md's "Code layout" is read as a tree (a name's indent says its folder), so a module added,
    moved or renamed without its line, or a line left behind, fails here."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    block = page.split("## Code layout", 1)[1].split("```", 2)[1]
    named, folders = set(), [(0, "")]
    for line in block.splitlines()[1:]:  # below "agent_memory/"
        match = re.match(r"^( +)([\w.]+/|\w+\.py)(?=\s|$)", line)
        if not match:
            continue
        indent, name = len(match[1]), match[2]
        while folders[-1][0] >= indent:
            folders.pop()
        path = folders[-1][1] + name
        named.add(path)
        if name.endswith("/"):
            folders.append((indent, path))
    layer = ROOT / "layers" / "shared" / "agent_memory"
    modules = {str(path.relative_to(layer)) for path in layer.rglob("*.py") if path.name != "__init__.py"}
    modules |= {str(path.relative_to(layer)) + "/" for path in layer.rglob("*") if (path / "__init__.py").exists()}

    assert sorted(named - modules) == [] and sorted(modules - named) == []


def source_files() -> set[str]:
    found = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [name for name in dirs if not name.startswith(".") and name not in ("node_modules", "__pycache__")]
        found |= {str(Path(folder, name).relative_to(ROOT)) for name in files if name.endswith((".py", ".ts"))}
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_source_file_a_page_names_exists(page: Path) -> None:
    """A name in backticks that ends in .py or .ts (`storage/note_append.py`, `test_flush.py`) is a file of the
    repository, whole or as the end of its path; a placeholder (`functions/<name>/app.py`), a pattern
    (`*_contracts.py`) and a fenced block's text are not checked."""
    files = source_files()
    named = {
        path
        for code in re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL))
        for path in re.findall(r"(?<![\w/<>.*-])([\w-]+(?:/[\w.-]+)*\.(?:py|ts))\b", code)
    }
    missing = [path for path in sorted(named) if not any(file == path or file.endswith("/" + path) for file in files)]

    assert missing == []


# "Shape" is the JSON form of what the API reads or answers (docs/architecture.md's glossary): a stored key's form
# is its key format, a secret's its detector's kind, a stored item's its keys and attributes.
_STORED_FORM_AS_SHAPE = re.compile(
    r"\bshapes?\s+(?:written|of\s+(?:the\s+)?(?:keys?|claims?|records?|secrets?|stored\s+items?))\b"
    r"|\b(?:claim|record|secret|key|item)(?:'s|s)?\s+shapes?\b",
    flags=re.IGNORECASE,
)


def test_shape_never_names_the_form_of_a_key_a_secret_or_a_stored_item() -> None:
    texts = [*PAGES, *(path for folder in ("layers", "functions", "local") for path in (ROOT / folder).rglob("*.py"))]
    found = [
        f"{path.relative_to(ROOT)}: {' '.join(match.group(0).split())}"
        for path in texts
        for match in _STORED_FORM_AS_SHAPE.finditer(path.read_text())
    ]

    assert found == [], "say key format, kind, or keys and attributes"


@pytest.mark.parametrize(
    ("text", "caught"),
    [
        ("Claims of the shapes written before they named their thread", True),
        ("a GetItem of the claim's shape written before", True),
        ("one row per shape of secret", True),
        ("a version that changes the shape of stored items", True),
        ("every answer matching its schema's shape", False),
        ("The public shape of a run (docs/api.md)", False),
        ("the tool shapes against each SDK", False),
        ("Any other shape, or another claim name, makes the user a member of nothing", False),
        ("the `Answer` shape, `keyed` for an `Idempotency-Key`", False),
    ],
)
def test_the_shape_check_tells_a_stored_form_from_an_answer(text: str, caught: bool) -> None:
    assert bool(_STORED_FORM_AS_SHAPE.search(text)) is caught
