"""The memory in a LangGraph agent: ``AgentMemoryStore`` is the graph's long-term store, bound to one
conversation, and LangMem's ``manage_memory`` and ``search_memory`` tools write and search it; a delete the model
asks for is refused, and the model reads why.

::

    make run                                                     # the local stack, in another terminal
    PYTHONPATH=client python -m examples.langgraph_agent         # offline: a scripted model plays the conversation
    make demo EXAMPLE=langgraph_agent                            # the same, on a local stack it starts and stops
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from agent_memory_client.langgraph_store import AgentMemoryStore
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langmem import create_manage_memory_tool, create_search_memory_tool

from examples.cli import open_memory, parser, short

NAMESPACE = ("memories",)  # the store's one namespace: the conversation's scope, whatever the model says
FACT = "Ana lives in Lisbon and wants metric units"
Script = list[tuple[str, Callable[[list[str]], dict[str, Any] | None], Callable[[list[str]], str]]]


def _created_id(history: list[str]) -> str:
    """The id LangMem answered for the memory it created (``created memory <id>``)."""
    return next(text.split()[-1] for text in history if text.startswith("created memory "))


def _first_found(results: list[str]) -> str:
    found = json.loads(results[-1])
    return found[0]["value"]["content"] if found else "nothing"


# Each turn: the user's line, the tool call the model makes first (or None), and its answer from the tool results.
SCRIPT: Script = [
    (
        "Hi! I'm Ana. I live in Lisbon and I always want metric units.",
        lambda history: {"name": "manage_memory", "args": {"content": FACT}},
        lambda results: f"Nice to meet you, Ana. Noted ({results[-1]}).",
    ),
    (
        "Where do I live again?",
        lambda history: {"name": "search_memory", "args": {"query": "where does Ana live", "limit": 3}},
        lambda results: f"From my notes: {_first_found(results)}.",
    ),
    (
        "Please forget where I live.",
        lambda history: {"name": "manage_memory", "args": {"action": "delete", "id": _created_id(history)}},
        lambda results: f"I could not: {results[-1].splitlines()[0]}",
    ),
]


class ScriptedChatModel(BaseChatModel):
    """A scripted model behind LangChain's chat model interface: for the last user line it makes the script's tool
    call, then answers from the tool results the graph gave back, so a broken service shows in the transcript.
    No network."""

    script: Any
    out: Any

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **_: Any) -> Any:
        start = max(n for n, m in enumerate(messages) if isinstance(m, HumanMessage))
        _, call, answer = next(turn for turn in self.script if turn[0] == messages[start].content)
        results = [str(m.content) for m in messages[start + 1 :] if isinstance(m, ToolMessage)]
        for result in results[-1:]:
            self.out(f"tool ← {short(result, 200)}")
        history = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
        move = None if results else call(history)
        if move is None:
            reply = AIMessage(content=answer(results))
            self.out(f"assistant> {reply.content}")
        else:
            self.out(f"model → {move['name']} {json.dumps(move['args'], ensure_ascii=False)}")
            reply = AIMessage(content="", tool_calls=[{**move, "id": f"call-{len(messages)}", "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def agent(store: AgentMemoryStore, model: BaseChatModel) -> Any:
    """A tool-calling agent graph with LangMem's memory tools on ``store``; a tool's error (a refusal) goes back to
    the model as the tool's result."""
    tools = [create_manage_memory_tool(namespace=NAMESPACE), create_search_memory_tool(namespace=NAMESPACE)]
    bound = model.bind_tools(tools)
    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [bound.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode(tools, handle_tool_errors=True))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    return graph.compile(store=store, checkpointer=InMemorySaver())


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    args = parser("python -m examples.langgraph_agent", __doc__.split("\n\n")[0]).parse_args(argv)
    memory, context = open_memory(args)
    with memory:
        graph = agent(AgentMemoryStore(memory, context, namespace=NAMESPACE), ScriptedChatModel(script=SCRIPT, out=out))
        config = {"configurable": {"thread_id": context.thread_id}}
        for number, (user, _, _) in enumerate(SCRIPT, 1):
            out(f"── turn {number} ──\nuser> {user}")
            graph.invoke({"messages": [HumanMessage(user)]}, config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
