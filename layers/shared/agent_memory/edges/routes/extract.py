"""``POST /v1/extract``: facts from a stretch of conversation (docs/api.md §3 ``extract``), served by ToolsFunction
beside the tools (the same caller, the chat backend, and the same 29 seconds, of which an extraction takes 10)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.bootstrap import services
from agent_memory.domain.shapes import ExtractedAnswer
from agent_memory.edges.http import answer
from agent_memory.edges.requests.chat import EXTRACT_BODY, ExtractRequest, extract_command
from agent_memory.edges.requests.declared import body_of, reads
from agent_memory.edges.responses import documented

router = APIGatewayHttpRouter()


_ANSWER = documented(
    200, ExtractedAnswer, "`written`, `duplicate` or `failed` (nothing written), within 10 s.", 400, 403, 415, 422, 500
)


@router.post(
    "/v1/extract", summary="Turn a stretch of conversation into notes, each citing its messages", responses=_ANSWER
)
@reads(ExtractRequest, required=EXTRACT_BODY)
def extract() -> Response[dict[str, Any]]:
    extraction = services().extraction_service
    return answer(200, extraction.extract(extract_command(body_of(router, ExtractRequest))))
