"""The tools the chat backend calls on the model's behalf (docs/api.md §3), the tool list and the health check.

ToolsFunction (``functions/tools/app.py``) serves this router. Each tool's body is parsed in the contract's
order (envelope and context, then scope, then arguments: ``edges.requests.chat``); the writes honour
``Idempotency-Key`` through the same path as the dashboard's (``edges.http.idempotent``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.bootstrap import services
from agent_memory.domain.commands import DocumentWrite
from agent_memory.domain.document import Author
from agent_memory.domain.notes import Origin
from agent_memory.domain.shapes import Answer, RecalledAnswer, RememberedAnswer, SavedDocumentAnswer
from agent_memory.edges.http import answer, idempotent, replied
from agent_memory.edges.requests.chat import (
    TOOL_BODY,
    ArgsT,
    RecallArgs,
    RememberArgs,
    ToolCall,
    UpdateMemoryArgs,
    tool_call,
    tool_request,
)
from agent_memory.edges.requests.declared import Handler, json_of, reads
from agent_memory.edges.requests.reading import StrictModel
from agent_memory.edges.responses import HealthAnswer, ToolDefinitionAnswer, ToolsAnswer, documented
from agent_memory.edges.tool_catalog import tool_definitions
from agent_memory.storage.idempotency_records import Reply

router = APIGatewayHttpRouter()

# What each tool's route answers, as docs/openapi.json documents it.
_ANSWERS = {
    "/v1/tools/remember": documented(201, RememberedAnswer, "The note as written.", 400, 403, 415, 422, 429, 500, 503),
    "/v1/tools/update_memory": documented(
        200, SavedDocumentAnswer, "The new version.", 400, 403, 409, 415, 422, 500, 503
    ),
    "/v1/tools/recall": documented(200, RecalledAnswer, "The notes found, best first.", 400, 403, 415, 422, 500, 503),
}


def _tool(path: str, summary: str, arguments: type[StrictModel]) -> Callable[[Handler], Handler]:
    """The route of a tool, ``POST <path>``, whose body is the conversation context and ``arguments``."""
    declared = reads(tool_request(arguments), required=TOOL_BODY)
    return lambda handler: router.post(path, summary=summary, responses=_ANSWERS[path])(declared(handler))


@_tool("/v1/tools/remember", "remember: append one note to the conversation's memory", RememberArgs)
def remember() -> Response[Any]:
    def _remember(call: ToolCall[RememberArgs]) -> Answer:
        origin = Origin(user_id=call.context.user_id, thread_id=call.context.thread_id)
        return services().memory_service.remember(call.scope, origin, call.arguments.text)

    return _write(RememberArgs, "remember", 201, _remember)


@_tool("/v1/tools/update_memory", "update_memory: replace the curated document", UpdateMemoryArgs)
def update_memory() -> Response[Any]:
    def _update(call: ToolCall[UpdateMemoryArgs]) -> Answer:
        by = Author(user_id=call.context.user_id, thread_id=call.context.thread_id)
        write = DocumentWrite(call.scope, call.arguments.content, call.context.document_version, "tool", by)
        return services().memory_service.update_memory(write)

    return _write(UpdateMemoryArgs, "update_memory", 200, _update)


def _write(arguments: type[ArgsT], route: str, status: int, run: Callable[[ToolCall[ArgsT]], Answer]) -> Response[Any]:
    """A tool's write, parsed in the contract's order: a repeat of its key with the same context and arguments
    gets the first answer and writes nothing."""
    call = tool_call(json_of(router), arguments)
    request = {"context": call.context.model_dump(), "arguments": call.arguments.model_dump()}
    headers, caller = router.current_event.headers, call.context.user_id
    with idempotent(services().idempotency, headers, call.scope, route, caller, request) as write:
        if write.earlier is None:
            write.reply = Reply.of(status, run(call))
    return replied(write)


@_tool("/v1/tools/recall", "recall: search the notes, best first", RecallArgs)
def recall() -> Response[dict[str, Any]]:
    call = tool_call(json_of(router), RecallArgs)
    return answer(200, services().recall_service.recall(call.scope, call.arguments.query, k=call.arguments.k))


@router.get(
    "/v1/tools",
    summary="The tools, with JSON Schemas of their arguments",
    responses=documented(200, ToolsAnswer, "The three tools, ready to hand to a model.", 500),
)
@reads(None)
def list_tools() -> Response[dict[str, Any]]:
    return answer(200, ToolsAnswer(tools=[ToolDefinitionAnswer(**tool) for tool in tool_definitions()]))


@router.get("/v1/health", summary="Health check (open)", responses=documented(200, HealthAnswer, "The API is up."))
@reads(None)
def health() -> Response[dict[str, Any]]:
    return answer(200, HealthAnswer(status="ok"))
