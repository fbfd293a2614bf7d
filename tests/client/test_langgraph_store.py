"""LangGraph's ``BaseStore`` over one conversation's memory (docs/client.md "LangGraph"), offline: which route each
operation calls, what is refused before anything is sent, the one namespace, and LangMem's memory tools on it.
The example plays it against the local stack (tests/client/test_examples.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agent_memory_client import ConversationContext
from agent_memory_client.langgraph_store import AgentMemoryStore, StoreRefusal
from langgraph.func import entrypoint
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp
from langmem import create_manage_memory_tool, create_search_memory_tool

from agent_memory.edges.tool_catalog import tool_definitions
from tests.support.fake_hostile_memory import DAY, FakeHostileMemory

CONTEXT = ConversationContext(user_id="u-1", thread_id="t-1")
NS = ("memories",)


class RecordingMemory(FakeHostileMemory):
    """The fake service, recording each call the store makes (route and arguments)."""

    def __init__(self) -> None:
        super().__init__(tool_definitions(), content="# About\n- Lisbon")
        self.calls: list[tuple[str, Any]] = []

    def remember(self, context: Any, text: str) -> dict[str, Any]:
        self.calls.append(("remember", text))
        return super().remember(context, text)

    def update_memory(self, context: Any, content: str) -> dict[str, Any]:
        self.calls.append(("update_memory", (content, context.document_version)))
        return super().update_memory(context, content)

    def recall(self, context: Any, query: str, k: int | None = None) -> dict[str, Any]:
        self.calls.append(("recall", (query, k)))
        return super().recall(context, query, k)

    def get_context(self, context: Any) -> dict[str, Any]:
        self.calls.append(("context", context.document_version))
        return super().get_context(context)


@pytest.fixture
def memory() -> RecordingMemory:
    return RecordingMemory()


@pytest.fixture
def store(memory: RecordingMemory) -> AgentMemoryStore:
    return AgentMemoryStore(memory, CONTEXT)  # type: ignore[arg-type]


def test_put_remembers_a_note_and_search_recalls_it_keyed_by_the_note_id(
    store: AgentMemoryStore, memory: RecordingMemory
) -> None:
    store.put(NS, "a-key-of-the-caller", {"content": "Prefers metric units"})
    found = store.search(NS, query="units", limit=1)

    assert memory.calls == [("remember", "Prefers metric units"), ("recall", ("units", 1))]
    assert [(item.namespace, item.key, item.score) for item in found] == [(NS, f"{DAY}.1", 1.5)]
    assert set(found[0].value) == {"content", "day", "source"}


def test_search_pages_within_recalls_twenty_and_without_a_query_lists_the_recent_notes(
    store: AgentMemoryStore, memory: RecordingMemory
) -> None:
    assert [item.key for item in store.search(NS, query="x", offset=1, limit=30)] == [f"{DAY}.2"]
    assert store.search((), limit=5)[0].key == f"{DAY}.1"  # the empty prefix holds the store's namespace
    assert store.search(NS, limit=0) == []

    assert memory.calls == [("recall", ("x", 20)), ("context", None)]


def test_the_document_is_read_then_saved_on_the_version_read(store: AgentMemoryStore, memory: RecordingMemory) -> None:
    document = store.get(NS, "document")
    assert document is not None and document.value == {"content": "# About\n- Lisbon", "version": 3}

    store.put(NS, "document", {"content": "# About\n- Porto"})
    store.put(NS, "document", {"content": "# About\n- Porto, since May"})

    assert memory.calls[1:] == [
        ("update_memory", ("# About\n- Porto", 3)),
        ("update_memory", ("# About\n- Porto, since May", 4)),  # its own save is the version it knows
    ]


def test_a_document_put_without_a_get_is_saved_on_the_current_version(
    store: AgentMemoryStore, memory: RecordingMemory
) -> None:
    store.put(NS, "document", {"content": "# About\n- Porto"})

    assert memory.calls == [("update_memory", ("# About\n- Porto", None))]


def test_a_document_read_edited_and_put_back_is_stored_as_meant_not_escaped_twice(memory: RecordingMemory) -> None:
    memory.document["content"] = "# Code\n- Wrap code in <code>, R&amp;D"
    store = AgentMemoryStore(memory, CONTEXT)  # type: ignore[arg-type]
    shown = store.get(NS, "document")
    assert shown is not None and shown.value["content"] == "# Code\n- Wrap code in &lt;code>, R&amp;amp;D"

    store.put(NS, "document", {"content": shown.value["content"] + "\n- Keep &lt;pre> too"})
    store.put(NS, "k", {"content": "Prefers &lt;kbd>"})

    assert memory.document["content"] == "# Code\n- Wrap code in <code>, R&amp;D\n- Keep <pre> too"
    assert memory.remembered == ["Prefers <kbd>"]


@pytest.mark.parametrize(
    ("op", "refusal"),
    [
        (PutOp(NS, "k-1", None), "not deleted through the agent"),
        (PutOp(NS, f"{DAY}.1", {"content": "changed"}), "append-only"),
        (PutOp(NS, "k-1", {"content": {"name": "Ana"}}), "a note is text"),
        (PutOp(NS, "k-1", {"content": "x", "kind": "fact"}), "a note is text"),
        (PutOp(NS, "k-1", {"content": "x"}, ttl=5.0), "do not expire"),
        (GetOp(NS, f"{DAY}.1"), "notes are found by search"),
        (SearchOp(NS, filter={"source": "remember"}, query="x"), "no filter"),
    ],
)
def test_a_refused_operation_says_why_and_its_batch_sends_nothing(
    store: AgentMemoryStore, memory: RecordingMemory, op: Any, refusal: str
) -> None:
    with pytest.raises(StoreRefusal, match=refusal):
        store.batch([PutOp(NS, "k-0", {"content": "written first?"}), op])

    assert memory.calls == []


@pytest.mark.parametrize(
    "op",
    [
        PutOp(("memories", "u-2"), "k", {"content": "x"}),
        PutOp(("other",), "k", {"content": "x"}),
        GetOp(("memories", "u-2"), "document"),
        SearchOp(("memories", "u-2"), query="x"),
    ],
)
def test_another_namespace_is_refused_whatever_it_names(
    store: AgentMemoryStore, memory: RecordingMemory, op: Any
) -> None:
    with pytest.raises(InvalidNamespaceError, match="not this store's namespace"):
        store.batch([op])
    assert memory.calls == []


def test_list_namespaces_answers_the_one_namespace_where_it_matches(memory: RecordingMemory) -> None:
    store = AgentMemoryStore(memory, CONTEXT, namespace=("memories", "u-1"))  # type: ignore[arg-type]

    assert store.list_namespaces() == [("memories", "u-1")]
    assert store.list_namespaces(prefix=("memories", "*"), max_depth=1) == [("memories",)]
    assert store.list_namespaces(suffix=("u-1",)) == [("memories", "u-1")]
    assert store.list_namespaces(prefix=("other",)) == []
    assert store.list_namespaces(offset=1) == []
    assert memory.calls == []


def test_the_async_methods_answer_as_the_blocking_ones(store: AgentMemoryStore, memory: RecordingMemory) -> None:
    async def play() -> list[Any]:
        await store.aput(NS, "k", {"content": "Prefers metric units"})
        return await store.asearch(NS, query="units", limit=1)

    assert [item.key for item in asyncio.run(play())] == [f"{DAY}.1"]
    assert memory.calls == [("remember", "Prefers metric units"), ("recall", ("units", 1))]
    with pytest.raises(StoreRefusal):
        asyncio.run(store.adelete(NS, "k"))


def test_langmem_tools_create_and_search_on_the_store_and_a_delete_is_refused(
    store: AgentMemoryStore, memory: RecordingMemory
) -> None:
    manage = create_manage_memory_tool(namespace=NS, store=store)
    search = create_search_memory_tool(namespace=NS, store=store)

    created = manage.invoke({"content": "Prefers metric units"})
    found = json.loads(search.invoke({"query": "units", "limit": 2}))
    with pytest.raises(StoreRefusal, match="not deleted through the agent"):
        manage.invoke({"action": "delete", "id": "6f1c1c3e-8f6b-4c43-9a57-4c0f6a3b4f3e"})

    assert created.startswith("created memory ")
    assert [item["key"] for item in found] == [f"{DAY}.1", f"{DAY}.2"]
    assert memory.calls == [("remember", "Prefers metric units"), ("recall", ("units", 2))]


def test_a_langmem_namespace_template_filled_with_another_user_is_refused(memory: RecordingMemory) -> None:
    """The store made for u-1 under ("memories", "u-1"): a run configured for u-2 is refused, not written."""
    store = AgentMemoryStore(memory, CONTEXT, namespace=("memories", "u-1"))  # type: ignore[arg-type]
    manage = create_manage_memory_tool(namespace=("memories", "{langgraph_user_id}"))

    @entrypoint(store=store)
    def remember(content: str) -> str:
        answer: str = manage.invoke({"content": content})
        return answer

    assert remember.invoke("Prefers metric units", {"configurable": {"langgraph_user_id": "u-1"}}).startswith(
        "created memory "
    )
    with pytest.raises(InvalidNamespaceError, match="not this store's namespace"):
        remember.invoke("Ana's secret", {"configurable": {"langgraph_user_id": "u-2"}})
    assert memory.calls == [("remember", "Prefers metric units")]


def test_a_query_longer_than_recall_takes_is_sent_cut_to_its_bound(store: AgentMemoryStore, memory: RecordingMemory):
    """A model's query over recall's 2,000 characters (a 422 from the service) is cut, as the LlamaIndex block cuts
    it: a long question still finds notes instead of failing the tool call."""
    store.search(NS, query="units " * 500, limit=1)

    [(route, (query, _))] = memory.calls
    assert route == "recall" and query == ("units " * 500)[:2000]
