"""The client's backend operations against the local stack (docs/api.md §8): ``memory.admin`` exports, erases
and reads the usage of a user's or a workspace's memory by id, blocking and async alike; a dashboard token
is refused there, and the backend's client is refused on the dashboard's routes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from agent_memory_client import ConversationContext, Forbidden, InvalidInput, MemoryClient, Unauthorized

from local.token import mint
from tests.support.clients import Flavour, conversation_context
from tests.support.stack import Stack

pytestmark = pytest.mark.slow


@pytest.fixture
def stack_flavour(flavour: Flavour) -> Flavour:
    """Each test of this module runs with the blocking clients, then with the async ones."""
    return flavour


def export_all(memory: MemoryClient, **owner: str) -> list[dict[str, Any]]:
    pages = [memory.admin.export(**owner)]
    while pages[-1]["next_cursor"] is not None:
        pages.append(memory.admin.export(**owner, cursor=pages[-1]["next_cursor"]))
    return pages


def test_the_backend_exports_reads_usage_and_erases_a_user_and_leaves_the_neighbour(
    memory: MemoryClient, flavour: Flavour
) -> None:
    user, neighbour = f"p-{flavour.name}-user", f"p-{flavour.name}-neighbour"
    note = memory.remember(conversation_context(user), "Flies to Lisbon in March")["note"]
    memory.update_memory(conversation_context(user), "# Travel\n- Lisbon in March")
    memory.remember(conversation_context(neighbour), "Flies to Oslo in May")

    pages = export_all(memory, user=user)
    usage = memory.admin.usage(user=user)
    receipt = memory.admin.erase(user=user)

    assert [n["id"] for page in pages for n in page["notes"]] == [note["id"]]
    assert [v["version"] for page in pages for v in page["versions"]] == [1]
    assert usage["notes_today"] == 1
    assert (receipt["erased"]["notes"], receipt["erased"]["versions"]) == (1, 1)
    assert memory.admin.erase(user=user)["erased"] == {"notes": 0, "versions": 0, "other": 0}
    assert memory.recall(conversation_context(user), "Lisbon")["notes"] == []
    assert memory.get_context(conversation_context(user))["document"]["version"] == 0
    assert [n["text"] for n in memory.recall(conversation_context(neighbour), "Oslo")["notes"]] == [
        "Flies to Oslo in May"
    ]
    assert memory.admin.usage(user=neighbour)["notes_today"] == 1


def test_the_backend_erases_a_workspace(memory: MemoryClient, flavour: Flavour) -> None:
    workspace = f"w-platform-{flavour.name}"
    team = ConversationContext(user_id="p-member", thread_id="t-1", visibility="shared", workspace_id=workspace)
    memory.remember(team, "Standup moves to 9:30")

    pages = export_all(memory, workspace=workspace)
    usage = memory.admin.usage(workspace=workspace)
    receipt = memory.admin.erase(workspace=workspace)

    assert [n["text"] for page in pages for n in page["notes"]] == ["Standup moves to 9:30"]
    assert usage["notes_today"] == 1 and receipt["erased"]["notes"] == 1
    assert memory.recall(team, "standup")["notes"] == []


def test_an_id_off_the_pattern_is_invalid(memory: MemoryClient) -> None:
    with pytest.raises(InvalidInput) as slash:
        memory.admin.erase(user="u/1")  # one path segment: never another route
    with pytest.raises(InvalidInput):
        memory.admin.export(workspace="w 1")

    with pytest.raises(ValueError):
        memory.admin.usage(user="u-1", workspace="w-1")  # exactly one

    assert slash.value.status == 422


def test_a_dashboard_token_is_refused_and_the_backend_is_refused_on_the_dashboards_routes(
    client_stack: Stack, memory: MemoryClient, dashboard: Any
) -> None:
    memory.remember(conversation_context("p-token"), "Keeps bees")
    token = mint("p-token", [], admin=True)
    with httpx.Client(base_url=f"http://127.0.0.1:{client_stack.api_port}") as http:
        refused = http.delete("/v1/platform/users/p-token", headers={"Authorization": f"Bearer {token}"})
        unsigned = http.delete("/v1/memory/personal")  # the backend's (unsigned, locally) call on the dashboard's

    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert unsigned.status_code == 401
    assert memory.admin.usage(user="p-token")["notes_today"] == 1
    with pytest.raises(Unauthorized):
        dashboard("not-a-token").erase()
    with pytest.raises(Forbidden):
        dashboard(mint("p-token", [])).erase(workspace="w-elsewhere")
