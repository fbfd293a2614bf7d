"""``search/`` is the ranking and text analysis alone, pure: its modules import the standard library, PyStemmer, numpy
and each other, nothing that reaches a server (the OpenSearch adapter is ``providers.notes_index``). Imports under
``if TYPE_CHECKING:`` are types only and do not count."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SEARCH = Path(__file__).resolve().parents[2] / "layers" / "shared" / "agent_memory" / "search"
ALLOWED = set(sys.stdlib_module_names) | {"__future__", "Stemmer", "numpy"}


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(tree: ast.AST) -> list[str]:
    """Every module the code imports, at run time (wherever the import stands), ``TYPE_CHECKING`` blocks aside."""
    found: list[str] = []
    for node in ast.iter_child_nodes(tree):
        if _type_checking(node):
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(node.module or "")
        found += imports(node)
    return found


MODULES = sorted(SEARCH.glob("*.py"))


def test_the_modules_are_found() -> None:
    assert {"bm25.py", "analysis.py", "fusion.py"} <= {path.name for path in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_a_search_module_imports_nothing_that_does_io(path: Path) -> None:
    imported = imports(ast.parse(path.read_text()))

    assert [
        name for name in imported if name.split(".")[0] not in ALLOWED and not name.startswith("agent_memory.search")
    ] == []
