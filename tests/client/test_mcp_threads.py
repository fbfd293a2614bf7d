"""The MCP server's thread is the user's own (docs/client.md "The MCP server"): two members of a workspace never
write under one thread, and a session's URL cannot name one. Offline: the session's verified token is set as the
``mcp`` SDK's middleware sets it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from agent_memory_client import ConversationContext
from agent_memory_client.mcp_server import ID, MemoryMcp, _parser
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

SERVED = ConversationContext(user_id="per-session", thread_id="mcp")


def session_context(user: str, query: dict[str, str]) -> ConversationContext:
    """The context of a tool call of ``user``'s session whose URL carries ``query``."""
    token = AccessToken(token="t", client_id=user, scopes=[], subject=user, claims={"workspaces": ["w-team"]})
    server = MemoryMcp(None, SERVED, per_session=True)  # type: ignore[arg-type]
    reset = auth_context_var.set(AuthenticatedUser(token))
    try:
        request: Any = SimpleNamespace(request=SimpleNamespace(query_params=query))
        return server.context_of(request)
    finally:
        auth_context_var.reset(reset)


def test_two_members_of_a_workspace_get_threads_of_their_own():
    alice = session_context("alice", {"workspace": "w-team"})
    mallory = session_context("mallory", {"workspace": "w-team"})

    assert (alice.workspace_id, mallory.workspace_id) == ("w-team", "w-team")
    assert alice.thread_id == "mcp-alice" and mallory.thread_id == "mcp-mallory"


def test_a_session_url_cannot_name_a_thread():
    mallory = session_context("mallory", {"workspace": "w-team", "thread": "mcp-alice"})

    assert mallory.thread_id == "mcp-mallory"


@pytest.mark.parametrize(
    ("argv", "thread"),
    [
        (["--user", "u-1"], "mcp-u-1"),  # stdio, by default the user's own
        (["--user", "u-1", "--thread", "t-desk"], "t-desk"),  # named by who runs it for that user
        (["--transport", "http", "--auth", "jwt", "--jwt-secret", "s"], "mcp"),  # the base of each session's own
    ],
)
def test_the_configured_thread(argv: list[str], thread: str) -> None:
    from agent_memory_client.mcp_server import configured_context

    args = _parser().parse_args(argv)

    assert configured_context(args, per_session="--auth" in argv).thread_id == thread


def test_a_long_user_id_still_gives_a_thread_id_of_its_own():
    from agent_memory_client.mcp_server import thread_of

    long_one, other = "u" * 128, "u" * 127 + "v"

    assert ID.fullmatch(thread_of(long_one)) and ID.fullmatch(thread_of(other))
    assert thread_of(long_one) != thread_of(other)
