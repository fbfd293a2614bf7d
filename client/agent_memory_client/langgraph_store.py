"""LangGraph's long-term memory, its ``BaseStore``, backed by the memory service for one conversation.

::

    from langgraph.prebuilt import ToolNode
    from langmem import create_manage_memory_tool, create_search_memory_tool
    from agent_memory_client.langgraph_store import AgentMemoryStore

    store = AgentMemoryStore(memory, ConversationContext(user_id="u-1", thread_id="t-9"))
    tools = [create_manage_memory_tool(namespace=("memories",)), create_search_memory_tool(namespace=("memories",))]
    graph = builder.compile(store=store)        # the tools find it with get_store()

Whose memory it is comes from the context given here, never from a namespace: the store answers one namespace
(``("memories",)`` unless told otherwise), which stands for the conversation's scope (the user's personal memory
in a private conversation, the workspace's in a shared one), and refuses any other with LangGraph's own
``InvalidNamespaceError``. So a namespace template filled from the wrong run configuration cannot reach another
user's memory: it is refused, and nothing is sent.

=========================================  ==========================================================
operation                                  what it does
=========================================  ==========================================================
``put(ns, key, {"content": text})``        ``remember``: a new note (the key is the caller's and is not
                                           kept: items come back keyed by the note's id)
``put(ns, "document", {"content": md})``   ``update_memory``, on the version the last ``get`` read
``get(ns, "document")``                    the curated document (``POST /v1/context``)
``search(ns, query=...)``                  ``recall``: best first, ``score`` set; at most 20 notes
                                           (a query cut to recall's 2,000 characters)
``search(ns)`` (no query)                  the context's recent notes (today's and yesterday's), newest first
``list_namespaces()``                      the one namespace
=========================================  ==========================================================

Refused (:class:`StoreRefusal`, a ``ValueError``, before anything is sent): ``delete`` (a note is deleted by a
person, from the dashboard, never by the agent), a ``put`` on a note's id (notes are append-only: a correction is
a new note), a ``get`` of a note (``search`` finds notes), a value that is not ``{"content": str}``, a ``filter``
and a ``ttl``. A batch with a refused operation sends none of its operations.

Every text the store gives back goes to a model (LangMem's search tool hands the items to it as they are), so it
is fenced as ``system_prompt`` fences stored text (:mod:`agent_memory_client.fence`): a note's ``content`` one
line, the document a block, neither able to close the tool result or open a tag. What is put is read as text in
that form (``&lt;`` and ``&amp;`` stored as ``<`` and ``&``), so a document read, edited and put back is stored as
it was meant, never escaped twice. ``MemoryClient`` gives the text as stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from agent_memory_client.client import MemoryClient
from agent_memory_client.fence import fence, fence_line, unfence
from agent_memory_client.types import ConversationContext, Note

NAMESPACE = ("memories",)
DOCUMENT = "document"  # the key of the curated document
MAX_RECALL = 20  # recall's largest k
MAX_QUERY = 2_000  # recall's longest query: a longer one, a model's, is cut rather than refused


class StoreRefusal(ValueError):
    """An operation the memory service does not do through an agent's store; nothing was sent."""


class AgentMemoryStore(BaseStore):
    """A ``BaseStore`` over one conversation's memory (see the module's table). ``abatch`` runs ``batch`` on a
    worker thread with the blocking ``client``, so the event loop is never held up."""

    def __init__(
        self, client: MemoryClient, context: ConversationContext, *, namespace: Sequence[str] = NAMESPACE
    ) -> None:
        self.client = client
        self.context = replace(context, document_version=None)
        self.namespace = tuple(namespace)
        if not self.namespace or any(not label or "." in label for label in self.namespace):
            raise InvalidNamespaceError(f"a namespace is one or more labels without a period: {self.namespace}")
        self._document_version: int | None = None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Every operation checked first, then run in order: a refused one means none is sent."""
        checked = list(ops)
        for op in checked:
            self._check(op)
        return [self._run(op) for op in checked]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _own(self, namespace: tuple[str, ...], *, prefix: bool = False) -> None:
        mine = self.namespace[: len(namespace)] == namespace if prefix else namespace == self.namespace
        if not mine:
            raise InvalidNamespaceError(
                f"{namespace} is not this store's namespace: it holds one conversation's memory, {self.namespace}"
            )

    def _check(self, op: Op) -> None:
        if isinstance(op, GetOp):
            self._own(op.namespace)
            if op.key != DOCUMENT:
                raise StoreRefusal(f"get answers only {DOCUMENT!r}, the curated document; notes are found by search")
        elif isinstance(op, SearchOp):
            self._own(op.namespace_prefix, prefix=True)
            if op.filter:
                raise StoreRefusal("search takes no filter: notes are found by the words of a query")
        elif isinstance(op, PutOp):
            self._own(op.namespace)
            _check_put(op)
        elif not isinstance(op, ListNamespacesOp):
            raise StoreRefusal(f"not a store operation: {type(op).__name__}")

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get_document()
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        return _namespaces([self.namespace], op) if isinstance(op, ListNamespacesOp) else None

    def _get_document(self) -> Item | None:
        document = self.client.get_context(self.context)["document"]
        self._document_version = document["version"]
        if document["version"] == 0:
            return None
        when = _time(document["updated_at"])
        value = {"content": fence(document["content"]), "version": document["version"]}
        return Item(value=value, key=DOCUMENT, namespace=self.namespace, created_at=when, updated_at=when)

    def _put(self, op: PutOp) -> None:
        text = unfence(op.value["content"] if op.value else "")  # _check_put: {"content": str}
        if op.key == DOCUMENT:
            context = replace(self.context, document_version=self._document_version)
            saved = self.client.update_memory(context, text)
            self._document_version = saved["document"]["version"]
        else:
            self.client.remember(self.context, text)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit < 1:
            return []
        if op.query and op.query.strip():
            k = min(MAX_RECALL, op.offset + op.limit)
            found: list[tuple[Note, float | None]] = [
                (note, note["score"]) for note in self.client.recall(self.context, op.query[:MAX_QUERY], k=k)["notes"]
            ]
        else:
            found = [(note, None) for note in self.client.get_context(self.context)["recent_notes"]]
        return [self._item(note, score) for note, score in found[op.offset : op.offset + op.limit]]

    def _item(self, note: Note, score: float | None) -> SearchItem:
        when = _time(note["created_at"])
        value = {"content": fence_line(note["text"]), "day": note["day"], "source": fence_line(note["source"])}
        return SearchItem(self.namespace, note["id"], value, when, when, score)


def _check_put(op: PutOp) -> None:
    if op.value is None:
        raise StoreRefusal(
            "notes are not deleted through the agent: a person deletes a note from the dashboard, or erases it "
            "with the rest of their memory"
        )
    if op.ttl is not None:
        raise StoreRefusal("notes do not expire: put without a ttl")
    if op.key != DOCUMENT and _is_note_id(op.key):
        raise StoreRefusal(f"notes are append-only: {op.key} cannot be changed; put a new note for a correction")
    if set(op.value) != {"content"} or not isinstance(op.value["content"], str):
        raise StoreRefusal("a note is text: put {'content': '<the fact>'} (nothing else is stored)")


def _is_note_id(key: str) -> bool:
    """A key of the form the service gives its notes (``YYYY-MM-DD.N``), so one an item came back with."""
    day, _, position = key.partition(".")
    try:
        datetime.strptime(day, "%Y-%m-%d")
    except ValueError:
        return False
    return position.isdigit()


def _time(value: str | None) -> datetime:
    return datetime.fromisoformat(value) if value else datetime.now(UTC)


def _matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(want in ("*", label) for want, label in zip(path, part, strict=True))


def _namespaces(namespaces: list[tuple[str, ...]], op: ListNamespacesOp) -> list[tuple[str, ...]]:
    """LangGraph's ``list_namespaces`` over ``namespaces``: the matching ones, cut at ``max_depth``, paged."""
    found = [ns for ns in namespaces if all(_matches(ns, c) for c in op.match_conditions or ())]
    cut = sorted({ns[: op.max_depth] if op.max_depth is not None else ns for ns in found})
    return cut[op.offset : op.offset + op.limit]
