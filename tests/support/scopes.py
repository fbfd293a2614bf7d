"""Conversation contexts and notes written straight through the store, for tests of any tier."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_memory import bootstrap
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import DOCUMENT, NOTE, StoredText, prepare

PERSONAL = Scope("personal", "u-1")
TEAM = Scope("team", "w-3")


def stored(text: str) -> StoredText:
    """``text`` as remember's text pipeline stores it: what a test writing through a store hands it."""
    return prepare(text, "remember", NOTE, extra=frozenset()).text


def stored_document(content: str) -> StoredText:
    """``content`` as a tool write's text pipeline stores it."""
    return prepare(content, "tool", DOCUMENT, extra=frozenset()).text


def write_note(scope: Scope, created: datetime, text: str) -> str:
    """A note written at ``created`` through the same pipeline and store as ``remember``; returns its id."""
    note = bootstrap.services().memory_service.notes.append(
        scope,
        created=created,
        text=stored(text),
        source="remember",
        origin=Origin("u-1", "t-1"),
    )
    return note.id


def note_texts(client: Any, pk: str) -> list[str]:
    """The texts of every note stored in a scope's partition, read straight from the table."""
    rows = client.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        ExpressionAttributeValues={":p": {"S": pk}, ":n": {"S": "note#"}},
    )["Items"]
    return [row["text"]["S"] for row in rows]


def private(user: str = "u-1", thread: str = "t-1", **extra: Any) -> dict[str, Any]:
    return {"user_id": user, "thread_id": thread, "visibility": "private", **extra}


def shared(workspace: str, user: str = "u-1", thread: str = "t-2", **extra: Any) -> dict[str, Any]:
    return {"user_id": user, "thread_id": thread, "visibility": "shared", "workspace_id": workspace, **extra}
