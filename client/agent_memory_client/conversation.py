"""The one object a chat backend holds per conversation.

::

    conversation = Conversation(client, ConversationContext(user_id="u-1", thread_id="t-9"))
    system = conversation.system_prompt()                    # before each turn: the memory block
    tools = conversation.tools(format="bedrock")             # or openai-chat, openai-responses, anthropic
    ...                                                      # the model answers with a tool call
    result = conversation.handle(name, arguments)            # run it with this conversation's context
    conversation.flush(compaction_id, messages)              # before summarizing the conversation
    conversation.observe(messages, end=True)                 # facts from what was said (every N turns, or at the end)

The model only ever supplies a tool's arguments; the user, the thread and the workspace come from the
context given here, and an argument naming one of them is refused by the service (a 422 the model sees).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from agent_memory_client.client import MemoryClient
from agent_memory_client.errors import MemoryApiError
from agent_memory_client.fence import fenced_answer
from agent_memory_client.formats import convert
from agent_memory_client.types import (
    ConversationContext,
    Extracted,
    FlushResult,
    MemoryContext,
    SavedDocument,
    ToolDefinition,
)

# The most messages one extraction takes (docs/api.md §3 ``extract``): a longer stretch sends its newest.
MAX_MESSAGES = 2000


def _digest(messages: Sequence[Mapping[str, str]]) -> str:
    """The hex sha256 of messages' roles and contents: what :meth:`Conversation.observe` follows and names
    stretches by, since a framework that compacts its list (a summary in place of older messages) moves them."""
    shape = [[message.get("role", ""), message.get("content", "")] for message in messages]
    return hashlib.sha256(json.dumps(shape, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


class Conversation:
    """``extract_every``: :meth:`observe` extracts facts each time that many user turns have come since its last
    extraction; None (the default): only at the session's end (``observe(messages, end=True)``)."""

    def __init__(self, client: MemoryClient, context: ConversationContext, *, extract_every: int | None = None) -> None:
        if extract_every is not None and extract_every < 1:
            raise ValueError("extract_every is a number of user turns, at least 1 (or None: at the end only)")
        self.client = client
        self.context = context
        self.extract_every = extract_every
        self._tools: list[ToolDefinition] | None = None
        self.last_context: MemoryContext | None = None
        self._sent: set[str] = set()  # the digests of the messages already extracted
        self._last: tuple[int, str] | None = (
            None  # how many messages the list held at the last extraction, their digest
        )

    def system_prompt(self) -> str:
        """``POST /v1/context``'s ``system_prompt``, to inject before this turn. The document's version shown
        is remembered, so that an ``update_memory`` of this turn is refused (409) if someone changed it since."""
        self.last_context = self.client.get_context(self.context)
        self.context = replace(self.context, document_version=self.last_context["document"]["version"])
        return self.last_context["system_prompt"]

    def tool_definitions(self) -> list[ToolDefinition]:
        """``GET /v1/tools``, read once per conversation object."""
        if self._tools is None:
            self._tools = self.client.list_tools()
        return self._tools

    def tool_names(self) -> set[str]:
        return {tool["name"] for tool in self.tool_definitions()}

    def tools(self, format: str = "openai-chat") -> list[dict[str, Any]]:
        """The memory tools in a provider's request shape (see :mod:`agent_memory_client.formats`)."""
        return convert(self.tool_definitions(), format)

    def handle(self, tool_name: str, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """Run a model's tool call with this conversation's context and answer what to give back to the model:
        the service's answer with its stored text fenced as ``system_prompt`` fences it (every tool's: see
        :mod:`agent_memory_client.fence`), or ``{"error": {"code", "message"}}`` when the service refused the call (bad
        arguments, a stale document version, a quota), so that the model can correct itself.

        ``arguments`` may be the JSON text OpenAI returns. A tool that is not a memory tool is a ValueError:
        ask :meth:`tool_names` first when the model has other tools too."""
        if tool_name not in self.tool_names():
            raise ValueError(f"not a memory tool: {tool_name!r}")
        if isinstance(arguments, str):
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                return {"error": {"code": "invalid_input", "message": "the tool arguments are not valid JSON"}}
        else:
            parsed = dict(arguments or {})
        if not isinstance(parsed, dict):
            return {"error": {"code": "invalid_input", "message": "the tool arguments must be a JSON object"}}
        context = self.context if tool_name == "update_memory" else replace(self.context, document_version=None)
        try:
            answer = self.client.call_tool(context, tool_name, parsed)
        except MemoryApiError as error:
            refusal: dict[str, Any] = {"code": error.code, "message": error.message}
            if error.details:
                refusal["details"] = error.details
            return {"error": refusal}
        if tool_name == "update_memory":  # the model's own write is the version it now knows
            self.context = replace(self.context, document_version=cast(SavedDocument, answer)["document"]["version"])
        fenced: dict[str, Any] = fenced_answer(answer)  # stored text reaches the model as in system_prompt
        return fenced

    def observe(self, messages: Sequence[Mapping[str, str]], *, end: bool = False) -> Extracted | None:
        """Hand memory the conversation so far (every message, oldest first, ``{"role", "content"}``): when
        ``extract_every`` user turns have come since the last extraction, or at the session's ``end``, the
        messages not extracted yet go to ``POST /v1/extract`` and its answer is returned; else None (waiting).

        Each stretch has its own ``extraction_id`` (``x-`` and the first 32 hex of the sha256 of its messages'
        roles and contents), so sending the same stretch again is answered ``duplicate`` and writes nothing twice,
        and a different stretch is never taken for one sent. What was sent is followed by content, not position,
        since frameworks compact their lists: the messages after those extracted are waiting while the list begins
        with them, and once it does not (older messages replaced by a summary) every message whose content was not
        extracted yet. A ``failed`` extraction (or a refusal of the service, answered as ``failed`` with its code) is
        tried again, from the same message, by the next call. Its notes go to the backend, not to a model: nothing
        here needs fencing."""
        waiting = self._waiting(messages)
        turns = sum(message.get("role") == "user" for message in waiting)
        due = end or (self.extract_every is not None and turns >= self.extract_every)
        if not waiting or not due:
            return None
        stretch = waiting[-MAX_MESSAGES:]
        context = replace(self.context, document_version=None)
        try:
            answer = self.client.extract(context, f"x-{_digest(stretch)[:32]}", stretch)
        except MemoryApiError as error:
            return {"status": "failed", "notes": [], "skipped": [], "reason": f"{error.code}: {error.message}"}
        if answer["status"] != "failed":
            self._sent.update(_digest([message]) for message in waiting)
            self._last = (len(messages), _digest(messages))
        return answer

    def _waiting(self, messages: Sequence[Mapping[str, str]]) -> list[Mapping[str, str]]:
        """The messages after those extracted while the list still begins with them; once it does not (a
        framework replaced older messages by a summary), every message whose content was not extracted yet."""
        if self._last is None:
            return list(messages)
        count, digest = self._last
        if _digest(messages[:count]) == digest:
            return list(messages[count:])
        return [message for message in messages if _digest([message]) not in self._sent]

    def flush(self, compaction_id: str, messages: Sequence[Mapping[str, str]]) -> FlushResult:
        """Ask ``FlushFunction`` for a note of the conversation before summarizing it; never raises."""
        return self.client.flush(replace(self.context, document_version=None), compaction_id, messages)
