"""How a route declares its answers (``documented``), and the shapes that only the edges build.

The answers of the use cases, and the error body, are ``agent_memory.domain.shapes``: built there, serialised by
the routes (``edges.http.answer``) and described from the same classes. Here are the tool list and the
health check; ``documented`` puts them all into the route's ``responses=``, from which Powertools writes
``docs/openapi.json``.
"""

from __future__ import annotations

from typing import Any, Literal

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel, Field

from agent_memory.domain.shapes import Answer, ErrorBodyAnswer

# --- tools (docs/api.md §3) ----------------------------------------------------------------------------------


class ToolDefinitionAnswer(Answer):
    name: str
    description: str
    parameters: dict[str, Any] = Field(description="A JSON Schema of the tool's `arguments`.")


class ToolsAnswer(Answer):
    tools: list[ToolDefinitionAnswer]


class HealthAnswer(Answer):
    status: Literal["ok"]


# --- what a route declares --------------------------------------------------------------------------------

_REFUSALS = {
    400: "The body is not JSON (`malformed_request`).",
    401: "No token, or one that does not verify (`unauthorized`). In AWS the JWT authorizer refuses first, "
    'with API Gateway\'s own `{"message": "Unauthorized"}`.',
    403: "Not allowed: a private thread of another user, a workspace the caller is not a member of, or an "
    "operators' route (`forbidden`).",
    404: "The scope holds no such version or note (`not_found`).",
    429: "`quota_exceeded`: the scope has written its notes for today; `Retry-After` says when to try again.",
    415: "The body is not declared as JSON (`unsupported_media_type`).",
    409: "`version_conflict`: the document changed since the version the write was based on; nothing changed.",
    422: "The request breaks the contract (`invalid_input`, with `details`), or the document is too large even "
    "after compression (`document_too_large`), or the write would pass the scope's characters quota "
    "(`quota_exceeded`).",
    500: "An unexpected error (`internal_error`); nothing was half-written.",
    503: "DynamoDB or the chat model failed after retries (`storage_unavailable`, `model_unavailable`); nothing "
    "was written.",
}


def documented(status: int, model: type[BaseModel] | None, description: str, *refusals: int) -> dict[int, Any]:
    """A route's ``responses=``: its success (``model`` None: no body) and the refusals it can answer with."""
    # No body: an empty ``content``, else Powertools describes the handler's return annotation instead.
    content: dict[str, Any] = {"application/json": {"model": model}} if model is not None else {}
    answers: dict[int, OpenAPIResponse] = {status: {"description": description, "content": content}}
    for refusal in refusals:
        answers[refusal] = {
            "description": _REFUSALS[refusal],
            "content": {"application/json": {"model": ErrorBodyAnswer}},
        }
    return dict(answers)
