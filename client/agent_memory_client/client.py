"""The typed client: one method per route of docs/api.md §3 (tools, context) and §5 (management), plus the flush (§4).

::

    memory = MemoryClient("https://abc123.execute-api.eu-west-1.amazonaws.com",   # SigV4, standard chain
                          flush_function="agent-memory-FlushFunction-XYZ")
    local = MemoryClient("http://127.0.0.1:3000", lambda_endpoint="http://127.0.0.1:3001")   # make run: unsigned
    ctx = ConversationContext(user_id="u-1", thread_id="t-1")
    local.remember(ctx, "Prefers metric units")

    admin = ManagementClient("http://127.0.0.1:3000", token=jwt)   # the dashboard's routes, bearer JWT
    admin.get_document()                     # personal memory of the token's subject
    admin.get_document(workspace="w-3")      # a workspace's team memory
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self, Unpack, cast

import httpx

from agent_memory_client import sigv4
from agent_memory_client.flush import FLUSH_TIMEOUT_S, flush_before_compaction, flush_lambda_client
from agent_memory_client.transport import RetryPolicy, Transport, TransportOptions, new_idempotency_key
from agent_memory_client.types import (
    ConversationContext,
    DocumentView,
    DocumentWrite,
    FlushResult,
    MemoryContext,
    NotesPage,
    RecallResult,
    RememberResult,
    RunList,
    ToolDefinition,
    VersionPage,
)

WRITE_TOOLS = frozenset({"remember", "update_memory"})


class _Closing:
    """A client holds one connection pool: ``close()`` it, or use the client in a ``with`` block."""

    _transport: Transport

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class MemoryClient(_Closing):
    """The chat backend's client for the tools, the context and the flush (SigV4 in AWS, nothing locally)."""

    def __init__(
        self,
        endpoint: str,
        *,
        flush_function: str = "FlushFunction",
        lambda_endpoint: str | None = None,
        lambda_client: Any = None,
        **transport: Unpack[TransportOptions],
    ) -> None:
        """``transport``: how to reach the API (``signing`` "auto", ``region``, ``credentials``, ``timeout_s``
        10 s, ``retry``, ``http``), as ``Transport`` takes them."""
        self._transport = Transport(endpoint, **transport)
        self.flush_function = flush_function
        self._lambda_endpoint = lambda_endpoint
        self._lambda_client = lambda_client
        self._region = transport.get("region") or sigv4.region_of(endpoint)  # the flush runs in the API's region

    # --- tools and context (§3) ---------------------------------------------------------------------------

    def health(self) -> dict[str, str]:
        return cast(dict[str, str], self._transport.request("GET", "/v1/health"))

    def list_tools(self) -> list[ToolDefinition]:
        """``GET /v1/tools``: the three tools with JSON Schemas of their arguments."""
        return cast(list[ToolDefinition], self._transport.request("GET", "/v1/tools")["tools"])

    def call_tool(
        self,
        context: ConversationContext,
        name: str,
        arguments: Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/tools/<name>`` with the model's arguments as they are (the service checks them strictly)."""
        if name not in {"remember", "update_memory", "recall"}:
            raise ValueError(f"no such memory tool: {name!r}")
        if name in WRITE_TOOLS and idempotency_key is None:
            idempotency_key = new_idempotency_key()
        body = {"context": context.as_json(), "arguments": dict(arguments)}
        answer: dict[str, Any] = self._transport.request(
            "POST", f"/v1/tools/{name}", body=body, idempotency_key=idempotency_key
        )
        return answer

    def remember(
        self, context: ConversationContext, text: str, *, idempotency_key: str | None = None
    ) -> RememberResult:
        answer = self.call_tool(context, "remember", {"text": text}, idempotency_key=idempotency_key)
        return cast(RememberResult, answer)

    def update_memory(
        self, context: ConversationContext, content: str, *, idempotency_key: str | None = None
    ) -> DocumentWrite:
        answer = self.call_tool(context, "update_memory", {"content": content}, idempotency_key=idempotency_key)
        return cast(DocumentWrite, answer)

    def recall(self, context: ConversationContext, query: str, k: int | None = None) -> RecallResult:
        arguments: dict[str, Any] = {"query": query, **({"k": k} if k is not None else {})}
        return cast(RecallResult, self.call_tool(context, "recall", arguments))

    def get_context(self, context: ConversationContext) -> MemoryContext:
        """``POST /v1/context``: the memory block to inject before a turn."""
        return cast(MemoryContext, self._transport.request("POST", "/v1/context", body={"context": context.as_json()}))

    # --- the flush (§4), over Lambda Invoke ------------------------------------------------------------

    def flush(
        self,
        context: ConversationContext,
        compaction_id: str,
        messages: Sequence[Mapping[str, str]],
        *,
        timeout_s: float = FLUSH_TIMEOUT_S,
    ) -> FlushResult:
        """Invoke ``FlushFunction`` before a summary; never raises (every problem is ``failed``)."""
        if self._lambda_client is None:
            kwargs = {"region_name": self._region} if self._region else {}
            try:
                self._lambda_client = flush_lambda_client(
                    timeout_s=timeout_s, endpoint_url=self._lambda_endpoint, **kwargs
                )
            except Exception as error:  # noqa: BLE001 - no region, a broken profile: the flush never raises
                return {"status": "failed", "note": None, "reason": f"no Lambda client: {type(error).__name__}"}
        answer = flush_before_compaction(
            self._lambda_client,
            self.flush_function,
            context=context.as_json(),
            compaction_id=compaction_id,
            messages=[dict(message) for message in messages],
            timeout_s=timeout_s,
        )
        return cast(FlushResult, answer)


class ManagementClient(_Closing):
    """The dashboard's routes (§5) with a bearer JWT; ``workspace=None`` means the token subject's personal memory."""

    def __init__(
        self,
        endpoint: str,
        *,
        token: str | Callable[[], str],
        timeout_s: float = 10.0,
        retry: RetryPolicy | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self._transport = Transport(endpoint, signing="none", timeout_s=timeout_s, retry=retry, http=http)
        self._token = token

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        token = self._token() if callable(self._token) else self._token
        return self._transport.request(method, path, bearer=token, **kwargs)

    @staticmethod
    def _base(workspace: str | None) -> str:
        return "/v1/memory/personal" if workspace is None else f"/v1/memory/workspaces/{workspace}"

    def get_document(self, *, workspace: str | None = None) -> DocumentView:
        return cast(DocumentView, self._call("GET", f"{self._base(workspace)}/document"))

    def put_document(
        self, content: str, expected_version: int, *, workspace: str | None = None, idempotency_key: str | None = None
    ) -> DocumentWrite:
        body = {"content": content, "expected_version": expected_version}
        key = idempotency_key or new_idempotency_key()
        return cast(
            DocumentWrite, self._call("PUT", f"{self._base(workspace)}/document", body=body, idempotency_key=key)
        )

    def list_versions(
        self, *, limit: int | None = None, cursor: str | None = None, workspace: str | None = None
    ) -> VersionPage:
        params = {"limit": limit, "cursor": cursor}
        return cast(VersionPage, self._call("GET", f"{self._base(workspace)}/document/versions", params=params))

    def get_version(self, version: int, *, workspace: str | None = None) -> DocumentView:
        return cast(DocumentView, self._call("GET", f"{self._base(workspace)}/document/versions/{version}"))

    def restore_version(
        self, version: int, expected_version: int, *, workspace: str | None = None, idempotency_key: str | None = None
    ) -> DocumentView:
        path = f"{self._base(workspace)}/document/versions/{version}/restore"
        key = idempotency_key or new_idempotency_key()
        return cast(
            DocumentView, self._call("POST", path, body={"expected_version": expected_version}, idempotency_key=key)
        )

    def list_notes(
        self, *, before: str | None = None, days: int | None = None, workspace: str | None = None
    ) -> NotesPage:
        params = {"before": before, "days": days}
        return cast(NotesPage, self._call("GET", f"{self._base(workspace)}/notes", params=params))

    def search_notes(self, q: str, *, k: int | None = None, workspace: str | None = None) -> RecallResult:
        return cast(RecallResult, self._call("GET", f"{self._base(workspace)}/notes/search", params={"q": q, "k": k}))

    def delete_note(self, note_id: str, *, workspace: str | None = None) -> None:
        self._call("DELETE", f"{self._base(workspace)}/notes/{note_id}")

    # People's control (docs/api.md §6): export, erase, what each turn was shown, usage against the quotas.

    def export(self, *, cursor: str | None = None, workspace: str | None = None) -> dict[str, Any]:
        """One page of everything the scope holds, oldest first (``agent-memory-export/1``); follow ``next_cursor``."""
        return cast(dict[str, Any], self._call("GET", f"{self._base(workspace)}/export", params={"cursor": cursor}))

    def erase(self, *, workspace: str | None = None) -> dict[str, Any]:
        """Erase the whole scope (a workspace: operators only); the receipt. A repeat finishes an interrupted one."""
        return cast(dict[str, Any], self._call("DELETE", self._base(workspace)))

    def erase_my_notes(self, *, workspace: str) -> dict[str, Any]:
        """Erase the notes the token's user wrote in a workspace (``?author=me``); the receipt."""
        return cast(dict[str, Any], self._call("DELETE", f"{self._base(workspace)}/notes", params={"author": "me"}))

    def list_injections(
        self,
        *,
        thread_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        workspace: str | None = None,
    ) -> dict[str, Any]:
        """What ``/v1/context`` put in front of the model, newest first."""
        params = {"thread_id": thread_id, "limit": limit, "cursor": cursor}
        return cast(dict[str, Any], self._call("GET", f"{self._base(workspace)}/injections", params=params))

    def usage(self, *, workspace: str | None = None) -> dict[str, Any]:
        """Notes written today and characters stored, against the scope's quotas."""
        return cast(dict[str, Any], self._call("GET", f"{self._base(workspace)}/usage"))

    def list_runs(self, *, limit: int | None = None) -> RunList:
        """Operators only: the consolidation runs, newest first."""
        return cast(RunList, self._call("GET", "/v1/admin/consolidation/runs", params={"limit": limit}))

    def start_run(self) -> dict[str, Any]:
        """Operators only: start a consolidation run now (202)."""
        return cast(dict[str, Any], self._call("POST", "/v1/admin/consolidation/runs"))
