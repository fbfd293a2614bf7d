"""The dashboard's scoped routes: each operation written once, served for personal and for team memory.

An operation takes the ``Scope`` first, then its own parameters; ``Scoped`` registers it twice on a router, at
the two paths written out where the operation is declared: one under ``/v1/memory/personal`` (the token's
subject's memory), one under ``/v1/memory/workspaces/<workspace_id>`` (the workspace's, for a member), with the
handler names, and so the operationIds, ``personal_<name>`` and ``team_<name>``. Each handler takes the
operation's own parameters (its signature, which Powertools validates and documents, is the operation's,
plus ``workspace_id`` on the team's path) and reads the body declared with it (``reads``).
Membership is settled before routing (``functions/management/app.py``, 403 before any validation); the team
resolver checks it once more, on the id the resolver routed, so that the two can never disagree.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partialmethod
from typing import Annotated, Any, Protocol, TypeVar, get_type_hints

from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from pydantic import BaseModel

from agent_memory.domain.scope import Scope
from agent_memory.edges.auth import Principal
from agent_memory.edges.requests.declared import reads
from agent_memory.edges.requests.reading import ID_PATTERN

PERSONAL = "/v1/memory/personal"
TEAM = "/v1/memory/workspaces/<workspace_id>"
WorkspaceId = Annotated[str, Path(pattern=ID_PATTERN)]
Operation = TypeVar("Operation", bound=Callable[..., Any])


class ScopeResolver(Protocol):
    """The memory a scoped route acts on, from the caller and the path's ``workspace_id`` (None: personal)."""

    def __call__(self, principal: Principal, workspace_id: str | None) -> Scope: ...


def personal(principal: Principal, workspace_id: str | None) -> Scope:
    """The caller's own memory (``workspace_id`` is always None on a personal route)."""
    return Scope("personal", principal.user_id)


def team(principal: Principal, workspace_id: str | None) -> Scope:
    if workspace_id is None:  # only a route under TEAM resolves with this
        raise ValueError("a team route without a workspace_id")
    principal.require_member(workspace_id)
    return Scope("team", workspace_id)


def principal_of(router: APIGatewayHttpRouter) -> Principal:
    """The caller, put in the resolver's context by the handler after authorization."""
    principal: Principal = router.context["principal"]
    return principal


class Scoped:
    """The dashboard's scoped routes of a router: ``Scoped(router).get(personal_path, team_path, responses)``
    (and ``put``, ``post``, ``delete``) registers ``operation(scope, **parameters)`` at both paths."""

    def __init__(self, router: APIGatewayHttpRouter) -> None:
        self.router = router

    def route(
        self,
        method: str,
        personal_path: str,
        team_path: str,
        responses: dict[int, Any],
        body: type[BaseModel] | None = None,
    ) -> Callable[[Operation], Operation]:
        """``operation`` as ``<method> <personal_path>`` and ``<method> <team_path>``, the same path under
        ``PERSONAL`` and under ``TEAM``, each reading ``body`` (none by default: ``reads``)."""
        if not personal_path.startswith(PERSONAL) or team_path != TEAM + personal_path.removeprefix(PERSONAL):
            raise ValueError(f"{team_path} is not {personal_path} of a workspace's memory")
        router = self.router

        def register(operation: Operation) -> Operation:
            hints = get_type_hints(operation, include_extras=True)  # the real types: Powertools reads them
            own = [
                parameter.replace(annotation=hints[parameter.name])
                for parameter in list(inspect.signature(operation).parameters.values())[1:]
            ]
            workspace = inspect.Parameter("workspace_id", inspect.Parameter.KEYWORD_ONLY, annotation=WorkspaceId)
            variants: list[tuple[str, str, ScopeResolver, list[inspect.Parameter]]] = [
                ("personal", personal_path, personal, []),
                ("team", team_path, team, [workspace]),
            ]
            for kind, path, resolve, extra in variants:
                handler = reads(body, prefix=("body",))(_handler(router, operation, resolve))
                handler.__name__ = handler.__qualname__ = f"{kind}_{operation.__name__}"
                handler.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                    [*extra, *(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY) for parameter in own)],
                    return_annotation=hints.get("return", Any),
                )
                router.route(path, method, responses=responses)(handler)
            return operation

        return register

    get = partialmethod(route, "GET")
    put = partialmethod(route, "PUT")
    post = partialmethod(route, "POST")
    delete = partialmethod(route, "DELETE")


def _handler(router: APIGatewayHttpRouter, operation: Callable[..., Any], resolve: ScopeResolver) -> Callable[..., Any]:
    def handler(workspace_id: str | None = None, **parameters: Any) -> Any:
        return operation(resolve(principal_of(router), workspace_id), **parameters)

    return handler
