"""The migration command against the local stack (docs/client.md "Migrating"): a mem0, a Zep and an AgentCore
export, each imported with ``python -m agent_memory_client.migrate``; the notes on their original days,
recalled, folded by the night's run when over a week old; the same command again writes nothing; a secret is
redacted; another user's memory is never touched."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from agent_memory_client import ConversationContext, MemoryClient
from agent_memory_client.migrate import main

from local.token import mint
from tests.support.stack import Stack, http

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parents[1] / "fixtures" / "migrate"
PEERS = {"mem0": "m-mem0", "zep": "m-zep", "agentcore": "m-agentcore"}


def notes_of(memory: MemoryClient, user: str) -> list[dict[str, Any]]:
    pages = [memory.admin.export(user=user)]
    while pages[-1]["next_cursor"] is not None:
        pages.append(memory.admin.export(user=user, cursor=pages[-1]["next_cursor"]))
    return [note for page in pages for note in page["notes"]]


def run(client_stack: Stack, peer: str, user: str) -> int:
    url = f"http://127.0.0.1:{client_stack.api_port}"
    return main(["--from", peer, str(FIXTURES / f"{peer}.json"), "--user", user, "--api-url", url])


def night(client_stack: Stack) -> dict[str, Any]:
    """A consolidation run now (the stack's clock is frozen at its NOW), waited for."""
    operator = mint("ops", [], admin=True)
    started = http(client_stack, "POST", "/v1/admin/consolidation/runs", token=operator)
    assert started.status == 202, started.body
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        runs = http(client_stack, "GET", "/v1/admin/consolidation/runs?limit=5", token=operator).body["runs"]
        run = next((run for run in runs if run["run_id"] == started.body["run_id"]), {})
        if run.get("finished_at"):
            return run
        time.sleep(0.2)
    raise AssertionError("the run did not finish")


def test_three_peers_exports_migrate_with_their_dates_once_and_fold_when_old(
    client_stack: Stack, memory: MemoryClient, capsys: pytest.CaptureFixture[str]
) -> None:
    neighbour = ConversationContext(user_id="m-neighbour", thread_id="t-1", visibility="private")
    memory.remember(neighbour, "Keeps bees on the roof")
    neighbours_before = notes_of(memory, "m-neighbour")

    assert [run(client_stack, peer, user) for peer, user in PEERS.items()] == [0, 0, 0]
    imported = {peer: notes_of(memory, user) for peer, user in PEERS.items()}
    first = capsys.readouterr().out
    assert [run(client_stack, peer, user) for peer, user in PEERS.items()] == [0, 0, 0]  # again: nothing written
    again = capsys.readouterr().out

    assert {peer: [(n["day"], n["text"][:30], n["source"]) for n in notes] for peer, notes in imported.items()} == {
        "mem0": [
            ("2026-10-14", "Is vegetarian and allergic to ", "mem0"),
            ("2026-11-03", "Deploys the side project with ", "mem0"),  # 18:40 at -07:00 is the next UTC day
            ("2026-12-01", "Started learning Portuguese fo", "mem0"),
        ],
        "zep": [
            ("2026-09-20", "Alex works at Fabrikam as a da", "zep"),
            ("2026-11-29", "Alex types on a split Kinesis ", "zep"),
        ],
        "agentcore": [
            ("2026-10-05", "The user prefers concise answe", "agentcore"),
            ("2026-11-30", "The user is planning a trip to", "agentcore"),
        ],
    }
    assert "ghp_A1b2" not in json.dumps(imported) and "[redacted: " in imported["mem0"][1]["text"]
    assert {peer: notes_of(memory, user) for peer, user in PEERS.items()} == imported
    assert again == first and first.count("page 1: ") == 3  # the same receipts, and the table as it was
    recalled = memory.recall(ConversationContext(user_id="m-zep", thread_id="t-9", visibility="private"), "Fabrikam")
    assert [n["text"] for n in recalled["notes"]][:1] == ["Alex works at Fabrikam as a data engineer"]

    run_record = night(client_stack)

    assert run_record["status"] == "finished", run_record
    # A run folds the notes over a week older than its own instant (the POST's: the wall clock, not the stack's)
    cutoff = (datetime.fromisoformat(run_record["started_at"]) - timedelta(days=7)).isoformat()
    folded = {peer: [n["consolidated"] for n in notes_of(memory, user)] for peer, user in PEERS.items()}
    assert folded == {peer: [n["created_at"] < cutoff for n in notes] for peer, notes in imported.items()}
    assert all(n["consolidated"] for user in PEERS.values() for n in notes_of(memory, user) if n["day"] < "2026-11-04")
    assert notes_of(memory, "m-neighbour") == neighbours_before
