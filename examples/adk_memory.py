"""The memory as a Google ADK memory service: ``AgentMemoryService`` is the ``BaseMemoryService`` of an ADK
``Runner``. At a session's end ``add_session_to_memory`` keeps the session's durable facts (``POST /v1/extract``,
each citing its messages); in the next session, ``search_memory`` (what ADK's ``load_memory`` and
``preload_memory`` tools call) recalls them, fenced for the model.

::

    make run                                                     # the local stack, in another terminal
    PYTHONPATH=client python -m examples.adk_memory              # offline: a session of ADK events, then a search

``google-adk`` pins its own ``httpx``, ``starlette`` and ``opentelemetry`` ranges: install it in an environment
of its own (``pip install ./client[adk]``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from agent_memory_client.adk_memory import AgentMemoryService
from google.adk.events.event import Event
from google.adk.sessions import InMemorySessionService
from google.genai import types

from examples.cli import extracted, open_memory, parser

APP = "travel-assistant"
SESSION = [
    ("user", "Hi! I live in Porto and I'm vegetarian."),
    ("model", "Nice to meet you. How can I help?"),
    ("user", "I'm flying to Osaka on March 3rd for two weeks."),
    ("model", "Wonderful. I can suggest vegetarian places in Osaka."),
]
QUESTION = "Where does the user live and what do they eat?"


async def play(user: str, session_id: str, memory: AgentMemoryService, out: Callable[[str], None]) -> None:
    """One session of ADK events added to the memory at its end, then a search from the next session."""
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name=APP, user_id=user, session_id=session_id)
    out(f"── session {session.id} ──")
    for role, text in SESSION:
        content = types.Content(role=role, parts=[types.Part(text=text)])
        await sessions.append_event(session, Event(author="user" if role == "user" else "assistant", content=content))
        out(f"{role}> {text}")
    await memory.add_session_to_memory(session)  # the session's end
    out(extracted(memory.extractions[-1] if memory.extractions else None))
    await memory.add_session_to_memory(session)  # added again: nothing new since, nothing sent
    out(f"added again: {len(memory.extractions)} extraction in all")
    found = await memory.search_memory(app_name=APP, user_id=user, query=QUESTION)
    out(f"── the next session: search_memory({QUESTION!r}) ──")
    for entry in found.memories:
        text = " ".join(part.text or "" for part in entry.content.parts or [])
        out(f"memory {entry.id} ({entry.timestamp}): {text}")


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    args = parser("python -m examples.adk_memory", (__doc__ or "").split("\n\n")[0]).parse_args(argv)
    client, context = open_memory(args)
    with client:
        asyncio.run(play(context.user_id, context.thread_id, AgentMemoryService(client), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
