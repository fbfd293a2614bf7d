"""Every path that stores text goes through the one text pipeline (``domain.text_pipeline``), by construction.

- The stores take only a ``StoredText``, what ``prepare`` made: a plain string is refused (TypeError) before
  anything is written, and every function of ``storage/`` that builds an item's text attribute checks it.
- Running every path of tests/support/redaction_paths.py (the corpus's paths), each storage write of text is seen with
  the path the pipeline made it for (in the text attributes of what the graph's clients are asked to write), and
  together they are exactly ``WRITE_PATHS``: a write path registered but not run by the corpus fails here, and so
  does a corpus path whose text reaches the table any other way.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.domain.document import Author
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import WRITE_PATHS
from tests.support.faults import ScriptedClient, provide_clients
from tests.support.redaction_paths import PATHS

STORAGE = Path(__file__).parents[2] / "layers" / "shared" / "agent_memory" / "storage"
TEXT_ATTRIBUTES = {"text", "content", "edits"}  # the item attributes that hold a stored text
# pure builders of items: their callers check the text
BUILDERS = {"note_item", "note_put", "append_items", "version_attributes", "version_put"}


def _writes_text(function: ast.FunctionDef) -> bool:
    """Whether ``function`` builds an item attribute of ``TEXT_ATTRIBUTES`` or calls a builder of one."""
    for node in ast.walk(function):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in TEXT_ATTRIBUTES and isinstance(value, ast.Dict):
                    return True
        stored = isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
        if stored and isinstance(node.slice, ast.Constant) and node.slice.value in TEXT_ATTRIBUTES:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BUILDERS:
            return True
    return False


def _checks(function: ast.FunctionDef) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "checked"
        for node in ast.walk(function)
    )


def test_every_storage_function_that_writes_a_text_checks_it_came_from_the_pipeline():
    writers = {
        f"{module.stem}.{function.name}": _checks(function)
        for module in sorted(STORAGE.glob("*.py"))
        for function in ast.walk(ast.parse(module.read_text()))
        if isinstance(function, ast.FunctionDef) and function.name not in BUILDERS and _writes_text(function)
    }

    assert {"note_store.append", "note_store.load", "document_store.save"} <= set(writers)
    assert [writer for writer, checks in writers.items() if not checks] == []


def test_a_store_refuses_a_text_the_pipeline_did_not_make_and_writes_nothing(aws):
    scope = Scope("personal", "u-plain")
    notes, documents = bootstrap.services().notes, bootstrap.services().documents
    created, origin = datetime(2026, 12, 3, 9, tzinfo=UTC), Origin("u-1", "t-1")
    writes: list[Callable[[], Any]] = [
        lambda: notes.append(scope, created=created, text="plain", source="remember", origin=origin),  # type: ignore[arg-type]
        lambda: notes.load(scope, Note("2026-12-03", 1, "plain", "2026-12-03T09:00:00.000Z", "remember", origin)),
        lambda: documents.save(
            scope,
            "plain",  # type: ignore[arg-type]
            expected_version=0,
            updated_at="2026-12-03T09:00:00.000Z",
            reason="tool",
            by=Author(user_id="u-1"),
        ),
    ]

    for write in writes:
        with pytest.raises(TypeError, match=r"text_pipeline\.prepare"):
            write()

    assert (
        aws.query(
            TableName="MemoryTable",
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": scope.key}},
        )["Items"]
        == []
    )


def _stored_texts(value: Any) -> list[Any]:
    """The text attributes (``TEXT_ATTRIBUTES``) of every item a write request puts, as the store handed them."""
    if isinstance(value, list):
        return [text for one in value for text in _stored_texts(one)]
    if not isinstance(value, dict):
        return []
    found = [value[name]["S"] for name in TEXT_ATTRIBUTES if isinstance(value.get(name), dict) and "S" in value[name]]
    return found + [text for one in value.values() for text in _stored_texts(one)]


def test_the_corpus_runs_every_write_path_and_each_stores_only_through_the_pipeline(aws):
    seen: dict[str, set[str]] = {}
    running: list[str] = []

    def spy(write: Callable[..., Any], **request: Any) -> Any:
        for text in _stored_texts(request):
            seen.setdefault(running[-1], set()).add(getattr(text, "path", "<not the pipeline>"))
        return write(**request)

    writes = ("put_item", "transact_write_items", "batch_write_item")
    provide_clients(lambda client: ScriptedClient(client, **dict.fromkeys(writes, spy)))
    texts = ["the deploy key is ghp_" + "A1b2C3d4E5" * 3 + "\u2028Q7r8S9t0U1v2", "rotate it every 90 days"]

    for number, (name, write) in enumerate(PATHS.items()):
        running.append(name)
        write(f"paths{number}", texts)

    assert {name for name in PATHS if name not in seen} == set()
    assert set().union(*seen.values()) == WRITE_PATHS, seen
