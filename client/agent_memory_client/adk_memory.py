"""The memory as a Google ADK memory service (``pip install agent-memory-client[adk]``): ``BaseMemoryService`` on
top of extraction and recall.

::

    from google.adk.runners import Runner
    from agent_memory_client.adk_memory import AgentMemoryService

    runner = Runner(agent=agent, app_name="travel", session_service=sessions, memory_service=AgentMemoryService(memory))
    ...
    await runner.memory_service.add_session_to_memory(session)   # at a session's end: its durable facts
    # the agent's load_memory / preload_memory tools then call search_memory

- ``add_session_to_memory(session)``: the session's user and model messages (text parts) go to
  ``POST /v1/extract`` through one :class:`Conversation` per session (``observe(..., end=True)``): a session added
  again sends only what came since, and the same stretch sent twice is a ``duplicate``. ADK's ``user_id`` is the
  memory's user, the session's id its thread; the memory is the user's personal one (``workspace_id``: a
  workspace's team memory instead). ``app_name`` names no scope: one user's memory is the same in every app.
- ``add_events_to_memory(...)``: a delta of events, extracted once under an id made of the events' ids.
- ``search_memory(...)``: ``recall`` (the query cut to its 2,000 characters), each note a ``MemoryEntry`` whose
  text is fenced as the memory block fences stored text (it reaches the model): no note can close a block or open
  a tag.

The blocking client's calls run on a worker thread: ADK's event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.events.event import Event
from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types

from agent_memory_client.client import MemoryClient
from agent_memory_client.conversation import Conversation
from agent_memory_client.fence import fence_line
from agent_memory_client.types import ConversationContext, Extracted

# The thread a search is made from: recall reads the scope, the thread only names who asked.
SEARCH_THREAD = "adk-search-memory"
MAX_QUERY = 2_000  # recall's longest query: a longer one, a model's, is cut rather than refused
_ROLES = {"user": "user", "model": "assistant"}


def messages_of(events: Sequence[Event]) -> list[dict[str, str]]:
    """The events' user and model messages with text, as ``{"role", "content"}`` (function calls left out)."""
    messages = []
    for event in events:
        content = event.content
        role = _ROLES.get(content.role or "") if content is not None else None
        text = " ".join(part.text for part in (content.parts or []) if part.text) if content is not None else ""
        if role is not None and text.strip():
            messages.append({"role": role, "content": text})
    return messages


class AgentMemoryService(BaseMemoryService):
    """ADK's memory service over this memory: extraction to write, recall to search. ``extractions`` keeps the
    answers of the extractions made (the backend's record: they go to no model)."""

    def __init__(self, client: MemoryClient, *, workspace_id: str | None = None, k: int = 8) -> None:
        self.client = client
        self.workspace_id = workspace_id
        self.k = k
        self.extractions: list[Extracted] = []
        self._conversations: dict[tuple[str, str], Conversation] = {}

    def _context(self, user_id: str, thread_id: str) -> ConversationContext:
        if self.workspace_id is None:
            return ConversationContext(user_id=user_id, thread_id=thread_id)
        return ConversationContext(
            user_id=user_id, thread_id=thread_id, visibility="shared", workspace_id=self.workspace_id
        )

    async def add_session_to_memory(self, session: Session) -> None:
        key = (session.user_id, session.id)
        conversation = self._conversations.get(key)
        if conversation is None:
            conversation = self._conversations[key] = Conversation(self.client, self._context(*key))
        answer = await asyncio.to_thread(conversation.observe, messages_of(session.events), end=True)
        if answer is not None:
            self.extractions.append(answer)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        messages = messages_of(events)
        if not messages:
            return
        named = hashlib.sha256("\n".join(event.id for event in events).encode()).hexdigest()[:32]
        context = self._context(user_id, session_id or SEARCH_THREAD)
        answer = await asyncio.to_thread(self.client.extract, context, f"events-{named}", messages)
        self.extractions.append(answer)

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        context = self._context(user_id, SEARCH_THREAD)
        recalled = await asyncio.to_thread(self.client.recall, context, query[:MAX_QUERY], self.k)
        return SearchMemoryResponse(memories=[_entry(note) for note in recalled["notes"]])


def _entry(note: Mapping[str, Any]) -> MemoryEntry:
    """A recalled note as ADK's memory entry: its text fenced (it goes to the model), its id, day and source."""
    text = types.Part(text=fence_line(note["text"]))
    return MemoryEntry(
        content=types.Content(role="user", parts=[text]),
        id=note["id"],
        author="memory",
        timestamp=note["created_at"],
        custom_metadata={"day": note["day"], "source": note["source"], "score": note["score"]},
    )
