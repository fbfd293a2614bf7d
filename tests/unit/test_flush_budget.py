"""The flush's answers and its 5-second budget (docs/api.md §4), the table's answers from botocore's Stubber.

Every path answers a status and never raises; a failure gives the claim back and writes no note.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from botocore.stub import Stubber

from agent_memory.basics.errors import MemoryServiceError
from agent_memory.edges.events import flush_command
from agent_memory.memory.flush import WRITE_RESERVE_S, FlushService
from agent_memory.storage.flush_store import FlushStore
from agent_memory.storage.note_store import NoteStore
from tests.support.fakes import FakeChatModel

TABLE = "MemoryTable"
EVENT = {
    "context": {"user_id": "u-1", "thread_id": "t-1", "visibility": "private"},
    "compaction_id": "c-1",
    "messages": [{"role": "user", "content": "Let's plan the Lisbon trip"}],
}


def flush(service: FlushService, event: Any) -> dict[str, Any]:
    """What FlushFunction's handler does: adapt the event, then flush it (or answer the refusal)."""
    try:
        command = flush_command(event)
    except MemoryServiceError as refusal:
        return service.refused(refusal)
    return service.flush(command)


def service(client: Any, model: FakeChatModel | None, *, enabled: bool = True, budget_s: float = 5.0) -> FlushService:
    return FlushService(
        NoteStore(client, TABLE), FlushStore(client, TABLE), lambda: model, enabled=enabled, budget_s=budget_s
    )


def test_a_disabled_flush_answers_disabled_without_a_request_or_a_model_call(table: tuple[Any, Stubber]) -> None:
    client, _ = table  # no response queued: any request would fail the test
    model = FakeChatModel()

    answer = flush(service(client, model, enabled=False), EVENT)

    assert answer == {"status": "disabled", "note": None}
    assert model.calls == []


@pytest.mark.parametrize(
    "event",
    [None, [], {**EVENT, "messages": []}, {**EVENT, "compaction_id": "has space"}, {**EVENT, "extra": 1}],
)
def test_a_malformed_event_is_failed_with_a_reason_and_touches_nothing(table: tuple[Any, Stubber], event: Any) -> None:
    client, _ = table

    answer = flush(service(client, FakeChatModel()), event)

    assert (answer["status"], answer["note"]) == ("failed", None)
    assert answer["reason"].startswith("invalid_input")


def test_no_chat_model_is_failed_and_the_claim_is_given_back(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    stubber.add_response("put_item", {}, None)  # the claim
    stubber.add_response("get_item", {}, None)  # no claim of the shape written before claims named their thread
    stubber.add_response("delete_item", {}, None)  # given back

    answer = flush(service(client, None), EVENT)

    assert answer["status"] == "failed"
    assert "MEMORY_CHAT_MODEL" in answer["reason"]


def test_a_model_slower_than_the_budget_is_failed_within_the_budget(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    stubber.add_response("put_item", {}, None)
    stubber.add_response("get_item", {}, None)
    stubber.add_response("delete_item", {}, None)
    model = FakeChatModel(delay_s=3.0)
    budget_s = WRITE_RESERVE_S + 0.4

    started = time.monotonic()
    answer = flush(service(client, model, budget_s=budget_s), EVENT)
    elapsed = time.monotonic() - started

    assert answer["status"] == "failed"
    assert "did not answer within" in answer["reason"]
    assert elapsed < model.delay_s  # the answer did not wait for the model
    model.abandon()


def test_a_budget_spent_before_the_model_is_asked_is_failed_without_a_model_call(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    stubber.add_response("put_item", {}, None)
    stubber.add_response("get_item", {}, None)
    stubber.add_response("delete_item", {}, None)
    model = FakeChatModel()

    answer = flush(service(client, model, budget_s=WRITE_RESERVE_S / 2), EVENT)

    assert answer["status"] == "failed"
    assert "budget ran out" in answer["reason"]
    assert model.calls == []


def test_a_model_failure_is_failed_with_its_message(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    stubber.add_response("put_item", {}, None)
    stubber.add_response("get_item", {}, None)
    stubber.add_response("delete_item", {}, None)

    answer = flush(service(client, FakeChatModel(fail_with="the model is throttled")), EVENT)

    assert (answer["status"], answer["reason"]) == ("failed", "the model is throttled")


def test_a_compaction_already_claimed_is_a_duplicate_without_a_model_call(table: tuple[Any, Stubber]) -> None:
    client, stubber = table
    held = {"pk": {"S": "user#u-1"}, "sk": {"S": "flush#c-1"}, "status": {"S": "in_progress"}, "token": {"S": "x"}}
    stubber.add_client_error(
        "put_item", "ConditionalCheckFailedException", "taken", 400, response_meta=None, modeled_fields={"Item": held}
    )
    model = FakeChatModel()

    answer = flush(service(client, model), EVENT)

    assert (answer["status"], answer["note"]) == ("duplicate", None)
    assert model.calls == []
