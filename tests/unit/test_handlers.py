"""Every Lambda handler validates the settings in its initialisation, so a bad setting stops the function with
one line naming it (docs/configuration.md) instead of failing each request differently."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

FUNCTIONS = sorted((Path(__file__).resolve().parents[2] / "functions").glob("*/app.py"))


def _module_level_calls(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {
        node.value.func.id
        for node in tree.body
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
    }


def test_every_function_folder_is_seen() -> None:
    assert len(FUNCTIONS) == 8


@pytest.mark.parametrize("handler", FUNCTIONS, ids=lambda path: path.parent.name)
def test_the_handler_validates_the_settings_at_initialisation(handler: Path) -> None:
    assert "require_valid_settings" in _module_level_calls(handler)
