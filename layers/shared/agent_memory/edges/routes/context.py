"""The memory block injected before every chat turn (docs/api.md §3 ``context``). ContextFunction
(``functions/context/app.py``) serves this router alone, so that the per-turn path has its own concurrency,
timeout and alarms, and imports nothing it does not use."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.bootstrap import services
from agent_memory.domain.shapes import MemoryContextAnswer
from agent_memory.edges.http import answer
from agent_memory.edges.requests.chat import TOOL_BODY, ContextRequest, context_call
from agent_memory.edges.requests.declared import json_of, reads
from agent_memory.edges.responses import documented

router = APIGatewayHttpRouter()


@router.post(
    "/v1/context",
    summary="The memory block to inject before a chat turn",
    responses=documented(
        200, MemoryContextAnswer, "The document and recent notes; degrades, never fails.", 400, 403, 415, 422, 500
    ),
)
@reads(ContextRequest, required=TOOL_BODY)
def context() -> Response[dict[str, Any]]:
    conversation, scope = context_call(json_of(router))
    record = services().turn_record(scope, conversation.thread_id, conversation.user_id)
    memory = services().memory_service.context(scope, shown=record.start)
    answered = answer(200, memory)  # built while the record's put is in flight
    if record.written():  # written before the answer, always
        return answered
    return answer(200, memory.model_copy(update={"degraded": [*memory.degraded, "injection_record"]}))
