"""Erased text gone from every record (docs/people.md "Erase"): a member's ``?author=me`` erase and a dashboard
note delete also void the records the notes left behind: the ``remember``'s idempotency record (its answer
held the text), the flush claim (it named the note) and the injection records (the author's turns, and the
deleted ids in everyone else's)."""

from __future__ import annotations

import json

from agent_memory import bootstrap
from local.token import mint
from tests.events import event_body
from tests.fakes import FakeChatModel
from tests.support.management import (
    local_auth,  # noqa: F401 - the fixture applies here
)
from tests.support.people import delete, get, partition
from tests.support.scopes import TEAM, shared

MEMBER = mint("u-2", ["w-3"])
SECRET_PLAN = "u-1's secret plan: leave in March"


def remember_keyed(keyed, user, text, key):
    answer = keyed(
        "remember", {"context": shared("w-3", user=user, thread=f"t-{user}"), "arguments": {"text": text}}, key
    )
    assert answer.status == 201
    return answer.body["note"]["id"]


def team_turn(call, user):
    assert call("context", {"context": shared("w-3", user=user, thread=f"t-{user}")}).status == 200


def stored(aws) -> str:
    return json.dumps(aws.scan(TableName="MemoryTable")["Items"])


def test_a_members_erase_voids_the_idempotency_record_that_held_the_text(call, aws, keyed):
    remember_keyed(keyed, "u-1", SECRET_PLAN, "key-1")
    remember_keyed(keyed, "u-2", "u-2's fact", "key-2")

    assert delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"}).status == 200

    assert SECRET_PLAN not in stored(aws)
    assert [sk for sk in partition(aws, TEAM) if sk.startswith("idem#")] == ["idem#remember#u-2#key-2"]


def test_a_dashboard_delete_voids_it_too_and_a_repeat_does_not_answer_the_erased_text(call, aws, keyed):
    note_id = remember_keyed(keyed, "u-1", SECRET_PLAN, "key-1")

    assert delete(f"/v1/memory/workspaces/w-3/notes/{note_id}").status == 204
    assert SECRET_PLAN not in stored(aws)
    again = keyed("remember", {"context": shared("w-3", thread="t-u-1"), "arguments": {"text": SECRET_PLAN}}, "key-1")

    assert again.status == 201
    assert again.body["note"]["id"] != note_id  # written anew by the caller who sent the text again


def test_a_members_erase_voids_the_flush_claim_of_their_note(call, aws, monkeypatch):
    model = FakeChatModel(reply=lambda s, p: SECRET_PLAN)
    monkeypatch.setattr(bootstrap.services().flush_service, "chat_model", lambda: model)
    event = event_body("flush")
    event["context"] = shared("w-3", user="u-1", thread="t-u-1")
    assert call("flush", event).body["status"] == "written"

    assert delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"}).status == 200

    assert [sk for sk in partition(aws, TEAM) if sk.startswith("flush#")] == []
    assert call("flush", event).body["status"] == "written"  # not "duplicate" of an erased note


def test_a_members_erase_takes_their_turns_and_their_note_ids_out_of_the_injection_records(call, aws, keyed):
    mine = remember_keyed(keyed, "u-1", SECRET_PLAN, "key-1")
    theirs = remember_keyed(keyed, "u-2", "u-2's fact", "key-2")
    team_turn(call, "u-1")
    team_turn(call, "u-2")

    assert delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"}).status == 200
    listed = get("/v1/memory/workspaces/w-3/injections", token=MEMBER).body["injections"]

    assert [(entry["thread_id"], entry["note_ids"]) for entry in listed] == [("t-u-2", [theirs])]
    assert mine not in json.dumps(listed) and "t-u-1" not in json.dumps(listed)


def test_a_dashboard_delete_takes_the_note_id_out_of_the_injection_records(call, aws, keyed):
    mine = remember_keyed(keyed, "u-1", SECRET_PLAN, "key-1")
    theirs = remember_keyed(keyed, "u-2", "u-2's fact", "key-2")
    team_turn(call, "u-2")

    assert delete(f"/v1/memory/workspaces/w-3/notes/{mine}", token=MEMBER).status == 204
    listed = get("/v1/memory/workspaces/w-3/injections", token=MEMBER).body["injections"]

    assert [entry["note_ids"] for entry in listed] == [[theirs]]
