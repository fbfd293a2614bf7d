"""The operators' routes (docs/api.md §5): consolidation runs, listed and started; the ``memory_admin`` claim
is checked before routing (``functions/management/app.py``) and again here."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.bootstrap import services
from agent_memory.domain.shapes import RunsAnswer, RunStartedAnswer
from agent_memory.edges.http import answer
from agent_memory.edges.requests.declared import reads
from agent_memory.edges.responses import documented
from agent_memory.edges.routes.scoped import principal_of

router = APIGatewayHttpRouter()

Limit = Annotated[int, Query(ge=1, le=100)]
_REFUSED = (401, 403, 422, 500, 503)
RUNS = documented(200, RunsAnswer, "The runs, newest first (operators only).", *_REFUSED)
START_RUN = documented(202, RunStartedAnswer, "A run was started (operators only).", *_REFUSED)


@router.get("/v1/admin/consolidation/runs", responses=RUNS)
@reads(None)
def list_runs(limit: Limit = 20) -> Response[dict[str, Any]]:
    principal_of(router).require_admin()
    return answer(200, services().management.runs(limit))


@router.post("/v1/admin/consolidation/runs", responses=START_RUN)
@reads(None)
def start_run() -> Response[dict[str, Any]]:
    principal = principal_of(router)
    principal.require_admin()
    return answer(202, services().management.start_run(principal.user_id))
