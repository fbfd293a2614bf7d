"""The client package against the local stack: every route of docs/api.md §3 to §5, success and each refusal, with
the blocking and the async clients alike."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from agent_memory_client import (
    ConversationContext,
    Forbidden,
    InvalidInput,
    MemoryClient,
    NotFound,
    Unauthorized,
    VersionConflict,
    flush_before_compaction,
    flush_lambda_client,
)
from botocore.exceptions import NoRegionError

from local.token import mint
from tests.support.clients import FLUSH_SUMMARY, Flavour, conversation_context
from tests.support.events import event_body
from tests.support.fake_openai import FakeOpenAI
from tests.support.stack import Stack

pytestmark = pytest.mark.slow


@pytest.fixture
def stack_flavour(flavour: Flavour) -> Flavour:
    """Each test of this module runs with the blocking clients, then with the async ones."""
    return flavour


# --- tools and context (§3) -----------------------------------------------------------------------------------


def test_health_and_the_tool_list(memory: MemoryClient) -> None:
    assert memory.health() == {"status": "ok"}
    tools = memory.list_tools()
    assert [tool["name"] for tool in tools] == ["remember", "update_memory", "recall"]
    assert all(tool["parameters"]["type"] == "object" for tool in tools)


def test_remember_then_the_next_turns_context_shows_the_note(memory: MemoryClient) -> None:
    ctx = conversation_context("c-remember")

    written = memory.remember(ctx, "- Prefers metric units")
    turn = memory.get_context(conversation_context("c-remember", "t-2"))

    assert written["note"]["text"] == "Prefers metric units" and written["truncated"] is False
    assert written["note"]["origin"] == {"user_id": "c-remember", "thread_id": "t-1"}
    assert turn["scope"] == "personal" and turn["degraded"] == []
    assert [note["id"] for note in turn["recent_notes"]] == [written["note"]["id"]]
    assert "Prefers metric units" in turn["system_prompt"]


def test_remember_refusals_carry_the_contract_code(memory: MemoryClient) -> None:
    with pytest.raises(InvalidInput) as heading:
        memory.remember(conversation_context("c-refuse"), "# A heading")
    with pytest.raises(Forbidden) as other_thread:
        memory.remember(conversation_context("c-refuse", thread_owner_id="someone-else"), "a fact")
    with pytest.raises(InvalidInput) as no_workspace:
        memory.remember(ConversationContext(user_id="c-refuse", thread_id="t-1", visibility="shared"), "a fact")

    assert (heading.value.status, heading.value.code) == (422, "invalid_input")
    assert (other_thread.value.status, other_thread.value.code) == (403, "forbidden")
    assert no_workspace.value.status == 422
    assert memory.get_context(conversation_context("c-refuse"))["recent_notes"] == []


@pytest.mark.parametrize("route", ["remember", "update_memory", "recall", "context"])
def test_every_tools_and_context_route_refuses_a_foreign_thread_and_a_shared_context_without_workspace(
    memory: MemoryClient, route: str
) -> None:
    calls = {
        "remember": lambda ctx: memory.remember(ctx, "a fact"),
        "update_memory": lambda ctx: memory.update_memory(ctx, "# doc"),
        "recall": lambda ctx: memory.recall(ctx, "fact"),
        "context": memory.get_context,
    }
    with pytest.raises(Forbidden) as foreign:
        calls[route](conversation_context("c-every", thread_owner_id="u-owner"))
    with pytest.raises(InvalidInput) as no_workspace:
        calls[route](ConversationContext(user_id="c-every", thread_id="t-1", visibility="shared"))

    assert (foreign.value.status, foreign.value.code) == (403, "forbidden")
    assert (no_workspace.value.status, no_workspace.value.code) == (422, "invalid_input")


def test_an_argument_naming_a_scope_is_refused_and_writes_nothing(memory: MemoryClient) -> None:
    ctx = conversation_context("c-scope")

    with pytest.raises(InvalidInput) as refused:
        memory.call_tool(ctx, "remember", {"text": "x", "user_id": "victim"})

    assert refused.value.code == "invalid_input"
    assert any("user_id" in detail["loc"] for detail in refused.value.details or [])
    assert memory.get_context(ctx)["recent_notes"] == []
    with pytest.raises(ValueError, match="no such memory tool"):
        memory.call_tool(ctx, "delete_everything", {})


def test_update_memory_saves_and_a_stale_version_is_a_conflict(memory: MemoryClient) -> None:
    ctx = conversation_context("c-doc", document_version=0)

    saved = memory.update_memory(ctx, "# About\n- Works in Lisbon")
    with pytest.raises(VersionConflict) as stale:
        memory.update_memory(ctx, "# About\n- Works in Porto")  # still based on version 0
    with pytest.raises(InvalidInput):
        memory.update_memory(conversation_context("c-doc"), "")

    assert saved["document"]["version"] == 1 and saved["compressed"] is False
    assert (stale.value.status, stale.value.code) == (409, "version_conflict")
    assert memory.get_context(conversation_context("c-doc"))["document"]["content"] == "# About\n- Works in Lisbon"


def test_recall_finds_the_scopes_note_and_refuses_a_blank_query(memory: MemoryClient) -> None:
    team = ConversationContext(user_id="c-recall", thread_id="t-1", visibility="shared", workspace_id="w-recall")
    memory.remember(team, "The staging cluster lives in eu-west-1")
    memory.remember(team, "Lunch is at noon")

    found = memory.recall(team, "which cluster for staging?", k=1)
    with pytest.raises(InvalidInput):
        memory.recall(team, "   ")
    with pytest.raises(InvalidInput):
        memory.recall(team, "cluster", k=21)

    assert found["mode"] == "keyword"
    assert [note["text"] for note in found["notes"]] == ["The staging cluster lives in eu-west-1"]
    assert found["notes"][0]["score"] > 0
    assert memory.recall(conversation_context("c-recall"), "cluster")["notes"] == []  # personal scope: not the team's


# --- the flush (§4) ----------------------------------------------------------------------------------------


def test_the_flush_is_written_once_per_compaction(memory: MemoryClient, fake_model: FakeOpenAI) -> None:
    payload = event_body("flush")
    ctx = ConversationContext(user_id="c-flush", thread_id="t-9", visibility="shared", workspace_id="w-flush")

    first = memory.flush(ctx, payload["compaction_id"], payload["messages"])
    again = memory.flush(ctx, payload["compaction_id"], payload["messages"])

    assert first["status"] == "written" and first["note"] is not None
    assert first["note"]["text"] == FLUSH_SUMMARY and first["note"]["source"] == "flush"
    assert again == {"status": "duplicate", "note": first["note"]}
    assert [note["text"] for note in memory.get_context(ctx)["recent_notes"]] == [FLUSH_SUMMARY]


def test_a_flush_to_a_missing_function_is_failed_not_raised(client_stack: Stack, stack_flavour: Flavour) -> None:
    client = stack_flavour.memory(
        f"http://127.0.0.1:{client_stack.api_port}",
        lambda_endpoint=f"http://127.0.0.1:{client_stack.lambda_port}",
        flush_function="NoSuchFunction",
    )
    outcome = client.flush(conversation_context("c-flush-missing"), "cmp-1", [{"role": "user", "content": "hi"}])
    assert outcome["status"] == "failed" and outcome["note"] is None


def test_the_readme_flush_snippet_works_in_a_shell_without_any_aws_configuration(
    client_stack: Stack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """boto3's own client raises NoRegionError there; ``flush_lambda_client`` fills in the local placeholders."""
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    endpoint = f"http://127.0.0.1:{client_stack.lambda_port}"
    with pytest.raises(NoRegionError):
        boto3.client("lambda", endpoint_url=endpoint)
    ctx = {"user_id": "c-readme", "thread_id": "t-1", "visibility": "private"}
    cid, msgs = "cmp-readme-1", [{"role": "user", "content": "Let us plan the migration."}]

    # The README's snippet, as written there:
    lam = flush_lambda_client(endpoint_url=endpoint)  # make run; in AWS: flush_lambda_client()
    outcome = flush_before_compaction(lam, "FlushFunction", context=ctx, compaction_id=cid, messages=msgs)

    assert outcome["status"] == "written" and outcome["note"]["text"] == FLUSH_SUMMARY
    assert lam.meta.region_name == "us-east-1"


# --- management (§5) ---------------------------------------------------------------------------------------


def test_the_document_routes_history_and_restore(dashboard: Any) -> None:
    admin = dashboard(mint("m-doc", []))

    empty = admin.get_document()
    first = admin.put_document("# v1", 0)
    second = admin.put_document("# v2", 1)
    with pytest.raises(VersionConflict):
        admin.put_document("# stale", 1)
    page = admin.list_versions(limit=1)
    older = admin.list_versions(limit=1, cursor=page["next_cursor"])
    as_it_was = admin.get_version(1)
    restored = admin.restore_version(1, 2)
    with pytest.raises(VersionConflict):
        admin.restore_version(1, 2)
    with pytest.raises(NotFound):
        admin.get_version(99)

    assert empty["document"]["version"] == 0 and empty["limits"] == {"soft": 18000, "hard": 25000}
    assert (first["document"]["version"], second["document"]["version"]) == (1, 2)
    assert [v["version"] for v in page["versions"]] == [2] and page["next_cursor"]
    assert [v["version"] for v in older["versions"]] == [1] and older["versions"][0]["reason"] == "dashboard"
    assert as_it_was["document"]["content"] == "# v1"
    assert (restored["document"]["version"], restored["document"]["content"]) == (3, "# v1")
    assert admin.get_document()["document"]["content"] == "# v1"


def test_notes_listing_search_and_delete_in_a_workspace(memory: MemoryClient, dashboard: Any) -> None:
    team = ConversationContext(user_id="m-notes", thread_id="t-1", visibility="shared", workspace_id="w-notes")
    kept = memory.remember(team, "The deploy window is Tuesday")["note"]
    gone = memory.remember(team, "The deploy freeze starts in December")["note"]
    member = dashboard(mint("m-notes", ["w-notes"]))

    days = member.list_notes(workspace="w-notes", days=2)
    found = member.search_notes("deploy freeze", k=5, workspace="w-notes")
    member.delete_note(gone["id"], workspace="w-notes")
    with pytest.raises(NotFound):
        member.delete_note(gone["id"], workspace="w-notes")
    with pytest.raises(InvalidInput):
        member.search_notes("  ", workspace="w-notes")
    with pytest.raises(InvalidInput):
        member.list_notes(workspace="w-notes", days=32)

    assert [note["id"] for note in days["days"][0]["notes"]] == [gone["id"], kept["id"]]
    assert days["next_before"] is None
    assert found["notes"][0]["id"] == gone["id"]
    assert [n["id"] for n in member.list_notes(workspace="w-notes", before="2099-01-01")["days"][0]["notes"]] == [
        kept["id"]
    ]


def test_peoples_control_export_usage_injections_agent_view_and_erase(memory: MemoryClient, dashboard: Any) -> None:
    ctx = conversation_context("m-people")
    note = memory.remember(ctx, "Keeps a sourdough starter")["note"]
    turn = memory.get_context(conversation_context("m-people", "t-shown"))
    person = dashboard(mint("m-people", ["w-people"]))
    team = ConversationContext(user_id="m-people", thread_id="t-1", visibility="shared", workspace_id="w-people")
    memory.remember(team, "The team's retro is on Fridays")

    pages = [person.export()]
    while pages[-1]["next_cursor"] is not None:
        pages.append(person.export(cursor=pages[-1]["next_cursor"]))
    usage = person.usage()
    view = person.agent_view()
    deadline = time.monotonic() + 10  # the injection record is written off the turn's path
    while not (shown := person.list_injections(thread_id="t-shown")["injections"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    mine_in_team = person.erase_my_notes(workspace="w-people")
    with pytest.raises(Forbidden):
        person.erase(workspace="w-people")  # a workspace is erased by operators only
    receipt = person.erase()

    assert {page["format"] for page in pages} == {"agent-memory-export/1"}
    assert [n["id"] for page in pages for n in page["notes"]] == [note["id"]]
    assert usage["notes_today"] == 1 and usage["chars"] == len(note["text"])
    assert view["system_prompt"] == turn["system_prompt"]
    with pytest.raises(Forbidden):
        person.agent_view(workspace="w-not-mine")
    assert shown and shown[0]["note_ids"] == [note["id"]]
    assert mine_in_team["erased"]["notes"] == 1
    assert receipt["erased"]["notes"] == 1
    assert person.usage()["chars"] == 0 and person.erase()["erased"]["notes"] == 0


def test_refusals_come_in_order_401_then_403(dashboard: Any) -> None:
    with pytest.raises(Unauthorized) as no_token:
        dashboard("not-a-token").get_document()
    with pytest.raises(Forbidden) as not_member:
        dashboard(mint("m-outsider", ["w-mine"])).get_document(workspace="w-theirs")
    with pytest.raises(Forbidden) as not_operator:
        dashboard(mint("m-outsider", [])).list_runs()

    assert (no_token.value.status, no_token.value.code) == (401, "unauthorized")
    assert not_member.value.status == 403 and not_operator.value.status == 403


def test_an_operator_starts_a_run_and_lists_it(dashboard: Any) -> None:
    operator = dashboard(mint("m-ops", [], admin=True))

    started = operator.start_run()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        runs = operator.list_runs(limit=5)["runs"]
        if any(run["run_id"] == started["run_id"] for run in runs):
            break
        time.sleep(0.2)

    assert started["status"] == "started"
    assert any(run["run_id"] == started["run_id"] for run in runs)
