"""Wiring: the process-wide service, built on first use (never at import time) from the settings."""

from __future__ import annotations

from functools import cache

from agent_memory.models.chat import chat_model_from_settings
from agent_memory.service import MemoryService
from agent_memory.settings import get_settings
from agent_memory.storage.client import make_dynamodb_client
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.note_store import NoteStore


@cache
def memory_service() -> MemoryService:
    """Clients are reused across invocations of a warm sandbox; the chat model is only built when needed."""
    settings = get_settings()
    client = make_dynamodb_client(settings)
    return MemoryService(
        NoteStore(client, settings.table_name),
        DocumentStore(client, settings.table_name),
        chat_model=cache(lambda: chat_model_from_settings(settings, timeout_s=settings.chat_timeout_s)),
    )


def reset() -> None:
    """Forget the cached settings and service (tests and the local stack change the environment)."""
    memory_service.cache_clear()
    get_settings.cache_clear()
