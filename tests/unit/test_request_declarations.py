"""A route that does not say what body it reads, or takes parameters that nothing validates, cannot be served:
building its function's resolver raises, so the module does not import and the function does not start
(``agent_memory.edges.requests.reading.reads``, ``agent_memory.edges.http.make_resolver``)."""

from __future__ import annotations

from typing import Annotated

import pytest
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.edges.http import make_resolver
from agent_memory.edges.requests.declared import UndeclaredRequest, reads
from agent_memory.edges.requests.reading import DASHBOARD_READING


def test_a_route_that_declares_no_body_fails_the_resolver():
    router = APIGatewayHttpRouter()

    @router.post("/v1/extract")  # classified, but its body undeclared
    def extract() -> dict[str, str]:
        return {}

    with pytest.raises(UndeclaredRequest, match=r"POST /v1/extract declares no body"):
        make_resolver(router)


def test_a_route_with_parameters_on_a_resolver_that_does_not_validate_them_fails():
    router = APIGatewayHttpRouter()

    @router.get("/v1/admin/consolidation/runs")
    @reads(None)
    def runs(limit: Annotated[int, Query(ge=1)] = 20) -> dict[str, int]:
        return {"limit": limit}

    with pytest.raises(UndeclaredRequest, match="takes parameters that nothing validates"):
        make_resolver(router, reading=DASHBOARD_READING)
    assert make_resolver(router, reading=DASHBOARD_READING, enable_validation=True).routes()


def test_a_declared_route_is_served():
    router = APIGatewayHttpRouter()

    @router.get("/v1/health")
    @reads(None)
    def health() -> dict[str, str]:
        return {"status": "ok"}

    assert [route.path for route in make_resolver(router).routes()] == ["/v1/health"]
