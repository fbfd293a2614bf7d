"""ToolsFunction: the tools the chat backend calls on the model's behalf, the tool list and the health check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.commands import DocumentWrite
from agent_memory.document import Author
from agent_memory.edges.http import answer, json_body_text, json_response, make_resolver, resolve_backend_call
from agent_memory.edges.parsing import idempotency_key
from agent_memory.edges.requests import RecallArgs, RememberArgs, UpdateMemoryArgs
from agent_memory.edges.responses import Health, ToolDefinition, Tools, documented
from agent_memory.edges.tool_call import ArgsT, ToolCall, parse_tool_call
from agent_memory.edges.tool_catalog import tool_definitions
from agent_memory.idempotency import Answer
from agent_memory.index_check import require_matching_index
from agent_memory.notes import Origin
from agent_memory.observability import logger, metrics
from agent_memory.runtime import idempotency, memory_service, recall_service
from agent_memory.settings import require_valid_settings
from agent_memory.shapes import Recalled, Remembered, SavedDocument

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line
require_matching_index()  # vectors of another size than the index's fail it too (agent_memory.index_check)

app = make_resolver()

# What each tool's route answers, as docs/openapi.json documents it.
_ANSWERS = {
    "remember": documented(201, Remembered, "The note as written.", 400, 403, 415, 422, 429, 500, 503),
    "update_memory": documented(200, SavedDocument, "The new version.", 400, 403, 409, 415, 422, 500, 503),
    "recall": documented(200, Recalled, "The notes found, best first.", 400, 403, 415, 422, 500, 503),
}


def _tool(name: str, summary: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The route of a tool: ``POST /v1/tools/<name>``, summarised ``<name>: <summary>``."""
    return app.post(f"/v1/tools/{name}", summary=f"{name}: {summary}", responses=_ANSWERS[name])


@_tool("remember", "append one note to the conversation's memory")
def remember() -> Response[Any]:
    def _remember(call: ToolCall[RememberArgs]) -> Answer:
        origin = Origin(user_id=call.context.user_id, thread_id=call.context.thread_id)
        return Answer(201, memory_service().remember(call.scope, origin, call.arguments.text).json_body())

    return _write(RememberArgs, "remember", _remember)


@_tool("update_memory", "replace the curated document")
def update_memory() -> Response[Any]:
    def _update(call: ToolCall[UpdateMemoryArgs]) -> Answer:
        by = Author(user_id=call.context.user_id, thread_id=call.context.thread_id)
        write = DocumentWrite(call.scope, call.arguments.content, call.context.document_version, "tool", by)
        saved = memory_service().update_memory(write)
        return Answer(200, saved.json_body())

    return _write(UpdateMemoryArgs, "update_memory", _update)


def _write(arguments: type[ArgsT], route: str, run: Callable[[ToolCall[ArgsT]], Answer]) -> Response[Any]:
    """A tool's write, parsed in the contract's order, that honours ``Idempotency-Key``: a repeat with the same
    context and arguments gets the first answer and writes nothing (docs/api.md §6)."""
    call = parse_tool_call(json_body_text(app.current_event), arguments)
    key = idempotency_key(app.current_event.headers)
    fingerprint = {"context": call.context.model_dump(), "arguments": call.arguments.model_dump()}
    done = idempotency().run_once(call.scope, route, key, fingerprint, lambda: run(call))
    return json_response(done.status, done.body)


@_tool("recall", "search the notes, best first")
def recall() -> Response[dict[str, Any]]:
    call = parse_tool_call(json_body_text(app.current_event), RecallArgs)
    return answer(200, recall_service().recall(call.scope, call.arguments.query, k=call.arguments.k))


@app.get(
    "/v1/tools",
    summary="The tools, with JSON Schemas of their arguments",
    responses=documented(200, Tools, "The three tools, ready to hand to a model.", 500),
)
def list_tools() -> Response[dict[str, Any]]:
    return answer(200, Tools(tools=[ToolDefinition(**tool) for tool in tool_definitions()]))


@app.get("/v1/health", summary="Health check (open)", responses=documented(200, Health, "The API is up."))
def health() -> Response[dict[str, Any]]:
    return answer(200, Health(status="ok"))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return resolve_backend_call(app, event, context)
