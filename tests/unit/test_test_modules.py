"""Two promises of the test suite, checked over every test file: a test module never imports another test module
(what files share, the named fakes and samples included, lives in ``tests/support/``, the one shared place), and no
test patches the object graph (parts are handed in through ``bootstrap.provide``, faults through the storage
client's factory, models through ``scripted_models()``).

A patch is read from the source: ``<fixture>.setattr(target, name, value)``, ``<fixture>.setattr("dotted.path",
value)`` and ``mock.patch(...)``. It patches the graph when its target is the service's (``agent_memory``, or a
name this check cannot trace to an import: a part taken from a built graph), unless what it sets is a module
constant (an upper-case name: a page size, a time budget). A library's or the standard library's function (the
process's ``time.sleep``, ``urllib.request.urlopen``) is not the graph. An attribute assigned on the built graph
(``bootstrap.services()...``) or a service's ``chat_model`` is a patch too.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
FILES = sorted(path for path in TESTS.rglob("*.py") if "__pycache__" not in path.parts)
THE_SERVICE = ("agent_memory",)


@cache
def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), filename=str(path))


def _name(path: Path) -> str:
    return str(path.relative_to(TESTS.parent))


def _imported(tree: ast.AST) -> list[tuple[str, int]]:
    """Every module a file imports (or names in ``pytest_plugins``), with its line; a relative import as ``.``."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(("." * node.level + (node.module or ""), node.lineno))
        elif isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytest_plugins" for target in node.targets
        ):
            found += [
                (plugin.value, node.lineno) for plugin in ast.walk(node.value) if isinstance(plugin, ast.Constant)
            ]
    return found


def _foreign_test_module(module: str) -> bool:
    if module.startswith("."):
        return True  # a sibling test module, or a conftest
    return module.startswith("tests.") and module != "tests.support" and not module.startswith("tests.support.")


def test_no_test_module_imports_another() -> None:
    imported = {
        _name(path): [
            f"{module} (line {line})" for module, line in _imported(_tree(path)) if _foreign_test_module(module)
        ]
        for path in FILES
    }

    assert {name: found for name, found in imported.items() if found} == {}, "move what they share into tests/support/"


def test_the_top_of_tests_holds_no_shared_module() -> None:
    """A module shared at the top of ``tests/`` would be a second shared place beside ``tests/support/``."""
    assert sorted(path.name for path in TESTS.glob("*.py")) == ["__init__.py", "conftest.py"]


def _sources(tree: ast.AST) -> dict[str, str]:
    """The module each imported name of the file stands for (imports inside functions included)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _root(expression: ast.expr) -> ast.expr:
    while isinstance(expression, (ast.Attribute, ast.Call, ast.Subscript)):
        expression = expression.func if isinstance(expression, ast.Call) else expression.value
    return expression


def _owner(target: ast.expr, names: dict[str, str]) -> str | None:
    """The module the patched object comes from; None when it cannot be traced to an import (a graph's part)."""
    root = _root(target)
    if isinstance(root, ast.Constant) and isinstance(root.value, str):
        return root.value
    if isinstance(root, ast.Name):
        return names.get(root.id)
    return None


def _patches_the_graph(owner: str | None, attribute: str) -> bool:
    if attribute.isupper():
        return False  # a module constant: a setting of the code, not a part
    return owner is None or owner.startswith(THE_SERVICE)


def _graph_patches(tree: ast.AST) -> list[str]:
    names, found = _sources(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "setattr" and node.args:
                target = node.args[0]
                if isinstance(target, ast.Constant) and isinstance(target.value, str):
                    owner, attribute = target.value, target.value.rsplit(".", 1)[-1]
                elif len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                    owner, attribute = _owner(target, names), str(node.args[1].value)
                else:
                    owner, attribute = None, ""
                if _patches_the_graph(owner, attribute):
                    found.append(f"line {node.lineno}: {ast.unparse(node)[:100]}")
            elif node.func.attr in ("patch", "object") and _owner(node.func, names) in ("unittest.mock", "mock"):
                target = node.args[0] if node.args else None
                owner = _owner(target, names) if target is not None else None
                attribute = (
                    str(node.args[1].value) if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else ""
                )
                if isinstance(target, ast.Constant):
                    attribute = str(target.value).rsplit(".", 1)[-1]
                if _patches_the_graph(owner, attribute):
                    found.append(f"line {node.lineno}: {ast.unparse(node)[:100]}")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and (
                    target.attr == "chat_model" or "services()" in ast.unparse(target)
                ):
                    found.append(f"line {node.lineno}: {ast.unparse(node)[:100]}")
    return found


def test_no_test_patches_the_object_graph() -> None:
    patches = {_name(path): _graph_patches(_tree(path)) for path in FILES}

    assert {name: found for name, found in patches.items() if found} == {}, "hand the part in through bootstrap.provide"


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("from agent_memory.storage.note_store import NoteStore\nmonkeypatch.setattr(NoteStore, 'append', spy)", 1),
        ("store = bootstrap.services().consolidation_store\nmonkeypatch.setattr(store, 'save_run', fail)", 1),
        ("monkeypatch.setattr('agent_memory.memory.service.system_prompt', slow)", 1),
        ("from agent_memory import bootstrap\npatch.setattr(bootstrap, 'RecallService', bounded)", 1),
        ("bootstrap.services().worker.chat_model = lambda: model", 1),
        ("flusher.chat_model = lambda: model", 1),
        ("from unittest import mock\nmock.patch.object(service, 'recall', fake)", 1),
        ("monkeypatch.setattr('agent_memory.people.control.PAGE_NOTES', 2)", 0),
        ("from agent_memory.memory import service\nmonkeypatch.setattr(service, 'UNVERSIONED_WRITE_BUDGET_S', 0.2)", 0),
        ("monkeypatch.setattr('time.sleep', lambda s: None)", 0),
        ("import importlib.util\nmonkeypatch.setattr(importlib.util, 'find_spec', missing)", 0),
        ("import botocore.auth\nmock.patch.object(botocore.auth, 'get_current_datetime', fixed)", 0),
    ],
)
def test_the_check_tells_a_graph_patch_from_a_setting(source: str, caught: int) -> None:
    assert len(_graph_patches(ast.parse(source))) == caught


@pytest.mark.parametrize(
    ("module", "foreign"),
    [
        ("tests.client.conftest", True),
        ("tests.integration.test_management", True),
        (".conftest", True),
        ("tests.support.faults", False),
        ("tests.support.fakes", False),
        ("tests.support", False),
        ("tests.helpers", True),
        ("tests.supporting", True),
        ("agent_memory.bootstrap", False),
    ],
)
def test_the_check_tells_a_test_module_from_a_shared_one(module: str, foreign: bool) -> None:
    assert _foreign_test_module(module) is foreign


def test_free_ports_are_distinct_while_they_are_handed_out() -> None:
    """A stack's two servers get two ports: the sockets are held until all are bound, so none is given twice."""
    from tests.support.calls import free_ports

    ports = free_ports(64)

    assert len(set(ports)) == 64
