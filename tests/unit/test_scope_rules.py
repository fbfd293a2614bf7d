"""The conversation decides the scope (docs/api.md §3): binding, and the keys that keep scopes apart."""

from __future__ import annotations

import pytest

from agent_memory.basics.errors import Forbidden, InvalidInput
from agent_memory.domain.scope import Scope, bind_scope
from agent_memory.edges.requests.chat import ConversationContext


def context(**fields: object) -> ConversationContext:
    return ConversationContext.model_validate({"user_id": "u-1", "thread_id": "t-1", **fields})


def test_a_private_thread_is_its_users_personal_memory() -> None:
    assert bind_scope(context(visibility="private")) == Scope("personal", "u-1")
    assert bind_scope(context(visibility="private", thread_owner_id="u-1")) == Scope("personal", "u-1")


def test_a_private_thread_of_someone_else_is_forbidden() -> None:
    with pytest.raises(Forbidden):
        bind_scope(context(visibility="private", thread_owner_id="u-2"))


def test_a_private_thread_ignores_a_workspace() -> None:
    assert bind_scope(context(visibility="private", workspace_id="w-3")) == Scope("personal", "u-1")


def test_a_shared_thread_is_its_workspaces_team_memory() -> None:
    assert bind_scope(context(visibility="shared", workspace_id="w-3")) == Scope("team", "w-3")


def test_a_shared_thread_without_a_workspace_is_refused() -> None:
    with pytest.raises(InvalidInput):
        bind_scope(context(visibility="shared"))


@pytest.mark.parametrize("scope", [Scope("personal", "u-1"), Scope("team", "u-1"), Scope("team", "w.3@x")])
def test_a_scopes_key_names_it_and_only_it(scope: Scope) -> None:
    assert Scope.from_key(scope.key) == scope
    assert Scope("personal", "u-1").key != Scope("team", "u-1").key
