"""ContextFunction: the memory block injected before every chat turn. Kept apart from the tools so that
the per-turn path has its own concurrency, timeout and alarms, and imports nothing it does not use."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.edges.http import answer, json_body_text, make_resolver, resolve_backend_call
from agent_memory.edges.responses import documented
from agent_memory.edges.tool_call import parse_context_call
from agent_memory.observability import logger, metrics
from agent_memory.runtime import memory_service, record_injection
from agent_memory.settings import require_valid_settings
from agent_memory.shapes import MemoryContext

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line

app = make_resolver()


@app.post(
    "/v1/context",
    summary="The memory block to inject before a chat turn",
    responses=documented(
        200, MemoryContext, "The document and recent notes; degrades, never fails.", 400, 403, 415, 422, 500
    ),
)
def context() -> Response[dict[str, Any]]:
    conversation, scope = parse_context_call(json_body_text(app.current_event))
    memory = memory_service().context(scope)
    record_injection(
        scope, conversation.thread_id, memory, conversation.user_id
    )  # queued: written behind the turn, never awaited
    return answer(200, memory)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return resolve_backend_call(app, event, context)
