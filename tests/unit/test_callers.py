"""A route without a class of caller cannot be served: registering it on an API function's resolver raises, so
the function's module does not import and the function does not start (``agent_memory.edges.callers``)."""

from __future__ import annotations

import pytest
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from agent_memory.edges.callers import ROUTES, Caller, UnclassifiedRoute, caller_of
from agent_memory.edges.http import make_resolver


def test_a_router_with_a_route_without_a_class_fails_the_resolver():
    router = APIGatewayHttpRouter()

    @router.get("/v1/tools")  # classified: the backend's
    def tools() -> dict[str, str]:
        return {}

    @router.delete("/v1/platform/users/<user_id>/notes")  # a new route, never named in the table
    def unclassified(user_id: str) -> dict[str, str]:
        return {}

    with pytest.raises(UnclassifiedRoute, match=r"DELETE /v1/platform/users/\{user_id\}/notes serves no class"):
        make_resolver(router)


def test_a_route_added_to_the_resolver_itself_without_a_class_fails_too():
    app = make_resolver()

    with pytest.raises(UnclassifiedRoute, match="GET /v1/debug"):
        app.get("/v1/debug")(lambda: {})


def test_every_method_of_a_route_needs_its_class():
    app = make_resolver()

    with pytest.raises(UnclassifiedRoute, match="POST /v1/health"):
        app.route("/v1/health", ["GET", "POST"])(lambda: {})


def test_a_rule_is_read_as_the_templates_route_key():
    assert caller_of("delete", "/v1/memory/workspaces/<workspace_id>") is Caller.OPERATOR
    assert caller_of("DELETE", "/v1/memory/workspaces/<workspace_id>/notes") is Caller.MEMBER
    assert set(ROUTES.values()) == set(Caller)
