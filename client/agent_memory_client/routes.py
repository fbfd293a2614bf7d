"""Every route of docs/api.md §3, §5 and §8 as a client method, written once for the blocking and the async clients.

A method here builds the :class:`Call` it makes (path, query, body, Idempotency-Key, how to read the
answer); :class:`route` turns it into a method of whichever client it is read from: on ``MemoryClient`` it
sends the call and returns the answer, on ``AsyncMemoryClient`` it returns a coroutine of the answer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import MethodType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload
from urllib.parse import quote

from agent_memory_client.exchange import Blocking, Call, new_idempotency_key
from agent_memory_client.transport import AsyncBase, SyncBase
from agent_memory_client.types import (
    ConversationContext,
    CurrentDocument,
    Export,
    Extracted,
    Health,
    Imported,
    ImportedNoteIn,
    Injections,
    MemoryContext,
    NotesByDay,
    OneVersion,
    Provenance,
    Recalled,
    Receipt,
    Remembered,
    Runs,
    RunStarted,
    SavedDocument,
    ToolAnswer,
    ToolDefinition,
    Usage,
    Versions,
    VersionWithEdits,
)

P = ParamSpec("P")
T = TypeVar("T")
TOOLS = frozenset({"remember", "update_memory", "recall"})
WRITE_TOOLS = frozenset({"remember", "update_memory"})


class route(Generic[P, T]):  # lower case: it reads as a decorator, like property
    """A client method given as the :class:`Call` (or :class:`Blocking` work) it builds; the client it is read
    from sends it. Read from the class, it is a plain function with the builder's name, docstring and
    parameters, as a method would be."""

    def __init__(self, build: Callable[Concatenate[Any, P], Call[T] | Blocking[T]]) -> None:
        @functools.wraps(build)
        def method(client: Any, *args: P.args, **kwargs: P.kwargs) -> Any:
            return client._transport.send(build(client, *args, **kwargs))

        self._method = method

    @overload
    def __get__(self, client: None, owner: type) -> Callable[Concatenate[Any, P], Any]: ...
    @overload
    def __get__(self, client: SyncBase, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, client: AsyncBase, owner: type) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, client: object, owner: type) -> Any:
        return self._method if client is None else MethodType(self._method, client)


def tool_call(
    context: ConversationContext, name: str, arguments: Mapping[str, Any], idempotency_key: str | None
) -> Call[Any]:
    """``POST /v1/tools/<name>`` with the model's arguments as they are (the service checks them strictly);
    a write gets a fresh Idempotency-Key unless given one."""
    if name not in TOOLS:
        raise ValueError(f"no such memory tool: {name!r}")
    if name in WRITE_TOOLS and idempotency_key is None:
        idempotency_key = new_idempotency_key()
    body = {"context": context.as_json(), "arguments": dict(arguments)}
    return Call("POST", f"/v1/tools/{name}", body=body, idempotency_key=idempotency_key)


def _tools(answer: Any) -> list[ToolDefinition]:
    tools: list[ToolDefinition] = answer["tools"]
    return tools


class MemoryRoutes:
    """The chat backend's routes (§3): the tools and the context."""

    @route
    def health(self) -> Call[Health]:
        return Call("GET", "/v1/health")

    @route
    def list_tools(self) -> Call[list[ToolDefinition]]:
        """``GET /v1/tools``: the three tools with JSON Schemas of their arguments."""
        return Call("GET", "/v1/tools", answer=_tools)

    @route
    def call_tool(
        self,
        context: ConversationContext,
        name: str,
        arguments: Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
    ) -> Call[ToolAnswer]:
        """Any of the three tools by name, e.g. a model's tool call; a name that is not one is a ValueError."""
        return tool_call(context, name, arguments, idempotency_key)

    @route
    def remember(
        self, context: ConversationContext, text: str, *, idempotency_key: str | None = None
    ) -> Call[Remembered]:
        return tool_call(context, "remember", {"text": text}, idempotency_key)

    @route
    def update_memory(
        self, context: ConversationContext, content: str, *, idempotency_key: str | None = None
    ) -> Call[SavedDocument]:
        return tool_call(context, "update_memory", {"content": content}, idempotency_key)

    @route
    def recall(self, context: ConversationContext, query: str, k: int | None = None) -> Call[Recalled]:
        arguments: dict[str, Any] = {"query": query, **({"k": k} if k is not None else {})}
        return tool_call(context, "recall", arguments, None)

    @route
    def get_context(self, context: ConversationContext) -> Call[MemoryContext]:
        """``POST /v1/context``: the memory block to inject before a turn."""
        return Call("POST", "/v1/context", body={"context": context.as_json()})

    @route
    def extract(
        self, context: ConversationContext, extraction_id: str, messages: Sequence[Mapping[str, str]]
    ) -> Call[Extracted]:
        """``POST /v1/extract``: at most 10 notes from ``messages``, each citing its messages' indexes; once per
        ``(thread_id, extraction_id)`` (a repeat answers ``duplicate``), within 10 seconds."""
        body = {"context": context.as_json(), "extraction_id": extraction_id, "messages": [dict(m) for m in messages]}
        return Call("POST", "/v1/extract", body=body)


def _base(workspace: str | None) -> str:
    """A scope's routes: ``workspace=None`` is the token subject's personal memory."""
    return "/v1/memory/personal" if workspace is None else f"/v1/memory/workspaces/{workspace}"


class ManagementRoutes:
    """The dashboard's routes (§5) and people's control over their memory (§6)."""

    @route
    def get_document(self, *, workspace: str | None = None) -> Call[CurrentDocument]:
        return Call("GET", f"{_base(workspace)}/document")

    @route
    def put_document(
        self, content: str, expected_version: int, *, workspace: str | None = None, idempotency_key: str | None = None
    ) -> Call[SavedDocument]:
        body = {"content": content, "expected_version": expected_version}
        key = idempotency_key or new_idempotency_key()
        return Call("PUT", f"{_base(workspace)}/document", body=body, idempotency_key=key)

    @route
    def get_provenance(self, *, workspace: str | None = None) -> Call[Provenance]:
        """Each line of the current document with the ids of the notes cited for it (empty: written by hand)."""
        return Call("GET", f"{_base(workspace)}/document/provenance")

    @route
    def list_versions(
        self, *, limit: int | None = None, cursor: str | None = None, workspace: str | None = None
    ) -> Call[Versions]:
        return Call("GET", f"{_base(workspace)}/document/versions", params={"limit": limit, "cursor": cursor})

    @route
    def get_version(self, version: int, *, workspace: str | None = None) -> Call[VersionWithEdits]:
        return Call("GET", f"{_base(workspace)}/document/versions/{version}")

    @route
    def restore_version(
        self, version: int, expected_version: int, *, workspace: str | None = None, idempotency_key: str | None = None
    ) -> Call[OneVersion]:
        path = f"{_base(workspace)}/document/versions/{version}/restore"
        key = idempotency_key or new_idempotency_key()
        return Call("POST", path, body={"expected_version": expected_version}, idempotency_key=key)

    @route
    def list_notes(
        self, *, before: str | None = None, days: int | None = None, workspace: str | None = None
    ) -> Call[NotesByDay]:
        params = {"before": before, "days": days}
        return Call("GET", f"{_base(workspace)}/notes", params=params)

    @route
    def search_notes(self, q: str, *, k: int | None = None, workspace: str | None = None) -> Call[Recalled]:
        return Call("GET", f"{_base(workspace)}/notes/search", params={"q": q, "k": k})

    @route
    def delete_note(self, note_id: str, *, workspace: str | None = None) -> Call[None]:
        return Call("DELETE", f"{_base(workspace)}/notes/{note_id}")

    @route
    def export(self, *, cursor: str | None = None, workspace: str | None = None) -> Call[Export]:
        """One page of everything the scope holds, oldest first (``agent-memory-export/1``); follow ``next_cursor``."""
        return Call("GET", f"{_base(workspace)}/export", params={"cursor": cursor})

    @route
    def erase(self, *, workspace: str | None = None) -> Call[Receipt]:
        """Erase the whole scope (a workspace: operators only); the receipt. A repeat finishes an interrupted one."""
        return Call("DELETE", _base(workspace))

    @route
    def erase_my_notes(self, *, workspace: str) -> Call[Receipt]:
        """Erase the notes the token's user wrote in a workspace (``?author=me``); the receipt."""
        return Call("DELETE", f"{_base(workspace)}/notes", params={"author": "me"})

    @route
    def list_injections(
        self,
        *,
        thread_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        workspace: str | None = None,
    ) -> Call[Injections]:
        """What ``/v1/context`` put in front of the model, newest first."""
        params = {"thread_id": thread_id, "limit": limit, "cursor": cursor}
        return Call("GET", f"{_base(workspace)}/injections", params=params)

    @route
    def usage(self, *, workspace: str | None = None) -> Call[Usage]:
        """Notes written today and characters stored, against the scope's quotas."""
        return Call("GET", f"{_base(workspace)}/usage")

    @route
    def agent_view(self, *, workspace: str | None = None) -> Call[MemoryContext]:
        """What ``/v1/context`` answers for a turn now (``system_prompt`` is the model's text); records no turn."""
        return Call("GET", f"{_base(workspace)}/context")

    @route
    def list_runs(self, *, limit: int | None = None) -> Call[Runs]:
        """Operators only: the consolidation runs, newest first."""
        return Call("GET", "/v1/admin/consolidation/runs", params={"limit": limit})

    @route
    def start_run(self) -> Call[RunStarted]:
        """Operators only: start a consolidation run now (202)."""
        return Call("POST", "/v1/admin/consolidation/runs")


def _platform(user: str | None, workspace: str | None, operation: str = "") -> str:
    """A backend operation's path, for exactly one of a user or a workspace; the id is one path segment whatever it
    holds (the service checks it)."""
    if (user is None) == (workspace is None):
        raise ValueError("name exactly one of user= or workspace=")
    kind, owner = ("users", user) if user is not None else ("workspaces", workspace)
    return f"/v1/platform/{kind}/{quote(str(owner), safe='')}" + (f"/{operation}" if operation else "")


class PlatformRoutes:
    """The chat backend's own data flows (§8), with its IAM identity: any user's (``user=``) or workspace's
    (``workspace=``) memory, by id; exactly one of the two."""

    @route
    def export(
        self, *, user: str | None = None, workspace: str | None = None, cursor: str | None = None
    ) -> Call[Export]:
        """One page of everything the memory holds, oldest first (``agent-memory-export/1``); follow ``next_cursor``."""
        return Call("GET", _platform(user, workspace, "export"), params={"cursor": cursor})

    @route
    def erase(self, *, user: str | None = None, workspace: str | None = None) -> Call[Receipt]:
        """Erase the whole memory (table and index); the receipt. A repeat finishes an interrupted one, else zeros."""
        return Call("DELETE", _platform(user, workspace))

    @route
    def usage(self, *, user: str | None = None, workspace: str | None = None) -> Call[Usage]:
        """Notes written today and characters stored, against the memory's quotas."""
        return Call("GET", _platform(user, workspace, "usage"))

    @route
    def import_notes(
        self,
        notes: Sequence[ImportedNoteIn],
        *,
        import_id: str,
        user: str | None = None,
        workspace: str | None = None,
        document: str | None = None,
    ) -> Call[Imported]:
        """Import up to 500 notes (``notes/1``), each stored at its own ``created_at``; the receipt. The same
        ``import_id`` again answers the first receipt and writes nothing, so a retry (the client retries a 503,
        ``import_unfinished`` included) continues the import. A larger import is sent in pages, one id each."""
        body = {"import_id": import_id, "format": "notes/1", "notes": list(notes)}
        return Call(
            "POST", _platform(user, workspace, "import"), body=body | ({"document": document} if document else {})
        )
