"""Exactly once through lost answers: DynamoDB commits a write, its answer is lost, and the write is sent again
(by botocore, or by the service's own contention retry). It is applied once, and answered as the first
attempt would have been: one version per acknowledged document write, no 409 for a write that is in, the
counters counting it once.

Each case runs twice: with an engine that honours a transaction's ``ClientRequestToken`` (DynamoDB, the
tests' moto) and with one that does not (the retry sent without it): there the write ids alone must hold.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from botocore.exceptions import ClientError

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import make_dynamodb_client
from local.template import load_handler
from local.token import mint
from tests.support.events import event_body, load_event
from tests.support.fakes import FakeChatModel
from tests.support.faults import document_items, notes
from tests.support.faults import items as everything
from tests.support.management import manage
from tests.support.models import scripted_models
from tests.support.scopes import private, shared

PERSONAL = Scope("personal", "u-1")
TEAM = Scope("team", "w-3")
TOKEN = mint("u-1", ["w-3"])
ENGINES = pytest.mark.parametrize("tokens", [True, False], ids=["tokens-honoured", "tokens-ignored"])


@pytest.fixture(autouse=True)
def _dashboard_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", "local-dev-secret")


def versions(aws: Any, scope: Scope = PERSONAL) -> list[tuple[int, str]]:
    return [
        (int(item["version"]["N"]), item["content"]["S"])
        for item in document_items(aws, scope)
        if item["sk"]["S"].startswith("doc#v#")
    ]


def _update(call: Any, content: str, **context: Any) -> Any:
    return call("update_memory", {"context": private(**context), "arguments": {"content": content}})


@ENGINES
@pytest.mark.parametrize("versioned", [False, True], ids=["unversioned", "versioned"])
def test_an_update_memory_whose_answer_was_lost_saves_one_version(call, aws, lost_answers, tokens, versioned):
    assert _update(call, "# Memory\n- one").status == 200
    clients = lost_answers("transact_write_items", tokens=tokens)

    answer = _update(call, "# Memory\n- two", **({"document_version": 1} if versioned else {}))

    assert answer.status == 200, answer.body
    assert answer.body["document"]["version"] == 2
    assert versions(aws) == [(1, "# Memory\n- one"), (2, "# Memory\n- two")]
    assert sum(client.lost for client in clients) == 1


@ENGINES
def test_a_dashboard_put_whose_answer_was_lost_is_not_refused_and_saves_one_version(call, aws, lost_answers, tokens):
    assert _update(call, "# Memory\n- one").status == 200
    lost_answers("transact_write_items", tokens=tokens)

    answer = manage(
        "personal_put_document",
        path="/v1/memory/personal/document",
        body={"content": "# Memory\n- edited", "expected_version": 1},
        token=TOKEN,
    )

    assert answer.status == 200, answer.body  # not 409: the edit is in
    assert versions(aws) == [(1, "# Memory\n- one"), (2, "# Memory\n- edited")]


@ENGINES
def test_a_restore_whose_answer_was_lost_saves_one_version(call, aws, lost_answers, tokens):
    _update(call, "# Memory\n- one")
    _update(call, "# Memory\n- two")
    lost_answers("transact_write_items", tokens=tokens)

    answer = manage(
        "personal_restore",
        path="/v1/memory/personal/document/versions/1/restore",
        body={"expected_version": 2},
        token=TOKEN,
    )

    assert answer.status == 200, answer.body
    assert versions(aws) == [(1, "# Memory\n- one"), (2, "# Memory\n- two"), (3, "# Memory\n- one")]


def test_a_document_write_whose_retries_were_spent_is_present_at_most_once(call, aws, lost_answers):
    _update(call, "# Memory\n- one")
    lost_answers("transact_write_items", then_raise="InternalServerError")

    answer = _update(call, "# Memory\n- two")

    assert answer.status == 503
    assert versions(aws) == [(1, "# Memory\n- one"), (2, "# Memory\n- two")]  # in, once: the outcome was unknown


def _notes_today() -> int:
    answer = manage("personal_usage", path="/v1/memory/personal/usage", token=TOKEN)
    assert answer.status == 200, answer.body
    return int(answer.body["notes_today"])


@ENGINES
@pytest.mark.parametrize(
    "lost",
    [("update_item",), ("transact_write_items",), ("update_item", "transact_write_items")],
    ids=["position", "note", "both"],
)
def test_remembers_whose_answers_were_lost_are_numbered_and_counted_once(call, aws, lost_answers, tokens, lost):
    clients = lost_answers(*lost, tokens=tokens)

    answers = [call("remember", {"context": private(), "arguments": {"text": f"fact {n}"}}) for n in range(5)]

    assert [answer.status for answer in answers] == [201] * 5
    assert [answer.body["note"]["position"] for answer in answers] == [1, 2, 3, 4, 5]  # no gap, no repeat
    assert notes(aws, PERSONAL) == [f"fact {n}" for n in range(5)]
    assert sum(client.lost for client in clients) >= 5
    assert _notes_today() == 5  # the counter equals the notes the table holds


@pytest.mark.parametrize("lost", ["update_item", "transact_write_items"], ids=["position", "note"])
def test_a_remember_whose_every_answer_was_lost_is_read_back_written_and_counted_once(call, aws, lost_answers, lost):
    """botocore's retries spent on a write that was applied: the position is the counter's last take, the note is
    found at its place by its write id; answered 201, counted once (not given back as a failed note: an under-count)."""
    assert call("remember", {"context": private(), "arguments": {"text": "fact 0"}}).status == 201
    lost_answers(lost, then_raise="InternalServerError")

    answer = call("remember", {"context": private(), "arguments": {"text": "fact 1"}})

    assert answer.status == 201, answer.body
    assert answer.body["note"]["position"] == 2
    assert notes(aws, PERSONAL) == ["fact 0", "fact 1"]
    assert _notes_today() == 2


def test_a_dashboard_delete_of_a_note_whose_answers_were_lost_gives_its_counts_back_once(call, aws, lost_answers):
    """The note's characters and its day's counts (the team's and its author's) come back once, though the
    delete's transaction and each give-back were applied and sent again: the give-backs carry the note's key."""
    for user in ("u-1", "u-2"):
        call("remember", {"context": shared("w-3", user=user), "arguments": {"text": f"noted by {user}"}})
    ident = call("remember", {"context": shared("w-3", user="u-1"), "arguments": {"text": "to go"}}).body["note"]["id"]
    clients = lost_answers("update_item", "transact_write_items")

    answer = manage("personal_delete_note", path=f"/v1/memory/workspaces/w-3/notes/{ident}", token=TOKEN)

    assert answer.status == 204, answer.body
    assert sum(client.lost for client in clients) >= 3  # the transaction, the characters, the day's counts
    items = {item["sk"]["S"]: item for item in everything(aws, TEAM)}
    assert int(items["usage"]["chars"]["N"]) == len("noted by u-1") + len("noted by u-2")
    (day,) = [item for sk, item in items.items() if sk.startswith("day#")]
    assert (day["live"], day["by#u-1"], day["by#u-2"]) == ({"N": "2"}, {"N": "1"}, {"N": "1"})


@pytest.mark.parametrize("lost", [("put_item",), ("put_item", "transact_write_items")], ids=["claim", "claim-and-note"])
def test_a_flush_whose_claim_answer_was_lost_writes_its_note_and_says_written(
    call, aws, lost_answers, monkeypatch, lost
):
    lost_answers(*lost, tokens=False)
    scripted_models().flush = FakeChatModel(reply=lambda s, p: "Summary.")
    body = event_body("flush")
    body["context"] = private()

    first = call("flush", body)
    again = call("flush", body)  # the backend's own retry of the same compaction event

    assert first.body["status"] == "written", first.body  # not "duplicate" of its own claim, with no note
    assert again.body["status"] == "duplicate" and again.body["note"]["id"] == first.body["note"]["id"]
    assert notes(aws, PERSONAL) == ["Summary."]


class _NoteWriteLostAndUnreadable:
    """The real client, except that the note's transaction applies and its answer never arrives (botocore's
    retries spent), and no note can be read back: what a proxy that holds answers did to a flush in a loaded run."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def transact_write_items(self, **kwargs: Any) -> Any:
        with contextlib.suppress(ClientError):  # applied, or refused: either way its answer never arrives
            self._real.transact_write_items(**kwargs)
        raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, "TransactWriteItems")

    def get_item(self, **kwargs: Any) -> Any:
        if kwargs["Key"]["sk"]["S"].startswith("note#"):
            raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, "GetItem")
        return self._real.get_item(**kwargs)


def test_a_flush_whose_note_write_answer_was_lost_answers_the_note_it_wrote_without_reading_it(call, aws):
    bootstrap.provide(make_dynamodb_client=lambda *a, **k: _NoteWriteLostAndUnreadable(make_dynamodb_client(*a, **k)))
    bootstrap.reset()
    scripted_models().flush = FakeChatModel(reply=lambda s, p: "Summary.")
    body = event_body("flush")
    body["context"] = private()

    answer = call("flush", body)

    assert answer.body["status"] == "written", answer.body
    (stored,) = [item for item in everything(aws, PERSONAL) if item["sk"]["S"].startswith("note#")]
    note = answer.body["note"]
    assert note is not None, answer.body
    assert (note["id"], note["text"], note["created_at"], note["source"]) == (
        f"{stored['day']['S']}.{stored['position']['N']}",
        stored["text"]["S"],
        stored["created_at"]["S"],
        "flush",
    )


def test_a_flush_whose_claim_outcome_stayed_unknown_gives_it_back_so_the_retry_writes(
    call, aws, lost_answers, monkeypatch
):
    """The claim applied, every answer lost: the flush answers failed and gives the claim back, so the backend's
    retry writes the note (it heard "duplicate" with no note, for the claim's lease, and the summary was lost)."""
    lost_answers("put_item", then_raise="InternalServerError")
    body = event_body("flush")
    body["context"] = private()
    summary = FakeChatModel(reply=lambda s, p: "Summary.")
    scripted_models().flush = summary

    first = call("flush", body)
    bootstrap.provide(make_dynamodb_client=make_dynamodb_client)
    bootstrap.reset()
    scripted_models().flush = summary
    again = call("flush", body)

    assert first.body["status"] == "failed", first.body
    assert again.body["status"] == "written", again.body
    assert notes(aws, PERSONAL) == ["Summary."]


def test_an_idempotency_key_whose_claim_answer_was_lost_is_this_call_s(aws, lost_answers, lambda_context):
    lost_answers("put_item", tokens=False)
    event = load_event("remember", {"context": private(), "arguments": {"text": "once"}})
    event["headers"]["Idempotency-Key"] = "k-1"

    first = load_handler("ToolsFunction")(event, lambda_context)
    again = load_handler("ToolsFunction")(event, lambda_context)

    assert first["statusCode"] == 201, first["body"]  # not 503 "still in progress": the claim is its own
    assert again["statusCode"] == 201 and again["body"] == first["body"]
    assert notes(aws, PERSONAL) == ["once"]


def _injections(aws: Any) -> list[dict[str, Any]]:
    return [item for item in aws.scan(TableName="MemoryTable")["Items"] if item["sk"]["S"].startswith("inj#")]


def test_the_record_of_what_a_turn_was_shown_is_written_before_the_answer_once(call, aws, lost_answers):
    lost_answers("put_item")  # the turn's one PutItem is its record

    answer = call("context", {"context": private()})

    assert answer.status == 200 and answer.body["degraded"] == []
    assert len(_injections(aws)) == 1  # already there when the turn is answered, and once


def test_a_turn_whose_record_cannot_be_written_says_so_and_is_answered(call, aws):
    from tests.support.faults import FaultyClient, provide_clients

    provide_clients(lambda client: FaultyClient(client, {"put_item": "InternalServerError"}))  # the record's put

    answer = call("context", {"context": private()})

    assert answer.status == 200
    assert answer.body["degraded"] == ["injection_record"]
    assert "system_prompt" in answer.body and _injections(aws) == []


def test_the_record_is_in_flight_while_the_answer_is_built(call, aws):
    """The record's PutItem starts once the turn knows what it shows, before the prompt is built: building the
    prompt here waits for the put to have started (a put sent after the answer was built never would)."""
    import threading
    from dataclasses import replace

    from agent_memory.domain.context_block import system_prompt
    from tests.support.faults import ScriptedClient, provide_clients

    put_started, seen = threading.Event(), {}

    def prompt_once_the_put_started(*args: Any) -> str:
        seen["put started first"] = put_started.wait(timeout=2)
        return system_prompt(*args)

    call("remember", {"context": private(), "arguments": {"text": "shown on the turn"}})
    memory = bootstrap.services().memory_service
    bootstrap.provide(memory_service=replace(memory, turn_prompt=prompt_once_the_put_started))
    provide_clients(
        lambda client: ScriptedClient(client, put_item=lambda real, **request: (put_started.set(), real(**request))[1])
    )

    answer = call("context", {"context": private()})

    assert seen == {"put started first": True}
    assert answer.status == 200 and answer.body["degraded"] == []
    assert [item["note_ids"]["L"] for item in _injections(aws)] == [[{"S": answer.body["recent_notes"][0]["id"]}]]


@ENGINES
def test_a_fold_whose_answers_were_lost_folds_each_note_once_and_counts_the_group_once(
    aws, lost_answers, tokens, monkeypatch
):
    from datetime import timedelta

    from tests.support.consolidation import RUN_AT, consolidate, folded_counts, merge, notes_of
    from tests.support.scopes import write_note

    ids = [write_note(PERSONAL, RUN_AT - timedelta(days=9, minutes=i), f"old fact {i}") for i in range(3)]
    clients = lost_answers("transact_write_items", "update_item", tokens=tokens)  # the save, the marks, the settle
    scripted_models().fold = FakeChatModel(reply=merge)

    run = consolidate()

    assert sum(client.lost for client in clients) >= 3
    assert (run["groups_planned"], run["groups_done"], run["groups_failed"]) == (1, 1, 0)
    assert run["notes_consolidated"] == 3
    assert len([version for version in versions(aws) if version[0] >= 1]) == 1  # one version for the fold
    assert folded_counts(aws) == dict.fromkeys(ids, 1)  # every marked note is in the version's document, once
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws))
