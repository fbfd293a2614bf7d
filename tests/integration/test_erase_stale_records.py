"""Erased text gone from every record (docs/people.md "Erase"): a member's ``?author=me`` erase and a dashboard
note delete also void the records the notes left behind: the ``remember``'s idempotency record (its answer
held the text), the flush claim (it named the note) and the injection records (the author's own turns, and the
deleted ids in everyone else's, in a thread they shared too); the receipt counts the records that went."""

from __future__ import annotations

import json

from agent_memory.storage.stale_records import IDEMPOTENT_REMEMBER
from local.token import mint
from tests.support.events import event_body
from tests.support.fakes import FakeChatModel
from tests.support.faults import crash_at
from tests.support.management import (
    ADMIN,
    local_auth,  # noqa: F401 - the fixture applies here
)
from tests.support.models import scripted_models
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
    scripted_models().flush = model
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


def shared_turn(call, user, thread="t-shared"):
    assert call("context", {"context": shared("w-3", user=user, thread=thread)}).status == 200


def test_a_members_erase_leaves_the_other_members_turns_in_a_thread_they_shared(call, aws):
    """Alice had 2 records of her own turns in a thread she shared with Mallory; Mallory erased her one note:
    Alice keeps both, without Mallory's note; Mallory's own turn goes, and the receipt counts it."""
    mallory = call("remember", {"context": shared("w-3", user="u-2", thread="t-shared"), "arguments": {"text": "m"}})
    alice = call("remember", {"context": shared("w-3", user="u-1", thread="t-shared"), "arguments": {"text": "a"}})
    mallorys, alices = mallory.body["note"]["id"], alice.body["note"]["id"]
    shared_turn(call, "u-1")
    shared_turn(call, "u-1")
    shared_turn(call, "u-2")

    receipt = delete("/v1/memory/workspaces/w-3/notes", token=MEMBER, query={"author": "me"})
    listed = get("/v1/memory/workspaces/w-3/injections", token=MEMBER).body["injections"]

    assert receipt.status == 200 and receipt.body["erased"] == {"notes": 1, "versions": 0, "other": 1}
    assert [(entry["thread_id"], entry["note_ids"]) for entry in listed] == [("t-shared", [alices])] * 2
    assert mallorys not in stored(aws)


def test_the_receipt_counts_the_records_that_went_with_the_notes(call, aws, keyed, monkeypatch):
    """Mallory's keyed remember, her flush's claim and her two turns go with her notes: 4 other items."""
    remember_keyed(keyed, "u-2", "u-2's fact", "key-2")
    model = FakeChatModel(reply=lambda s, p: "u-2's summary")
    scripted_models().flush = model
    event = event_body("flush")
    event["context"] = shared("w-3", user="u-2", thread="t-u-2")
    assert call("flush", event).body["status"] == "written"
    team_turn(call, "u-2")
    team_turn(call, "u-2")
    team_turn(call, "u-1")

    receipt = delete("/v1/memory/workspaces/w-3/notes", token=MEMBER, query={"author": "me"})

    assert receipt.body["erased"] == {"notes": 2, "versions": 0, "other": 4}
    assert [sk for sk in partition(aws, TEAM) if sk.startswith(("idem#", "flush#"))] == []
    assert len(get("/v1/memory/workspaces/w-3/injections", token=MEMBER).body["injections"]) == 1  # u-1's
    again = delete("/v1/memory/workspaces/w-3/notes", token=MEMBER, query={"author": "me"})
    assert again.body["erased"] == {"notes": 0, "versions": 0, "other": 0}


def test_an_erase_that_died_after_its_notes_went_still_voids_their_records(
    call,
    aws,
    keyed,
):
    """The second call no longer knows the erased ids (the notes are gone): the remember's record goes by its
    note's author, the member's turns by theirs; the receipt counts both once."""
    remember_keyed(keyed, "u-1", SECRET_PLAN, "key-1")
    team_turn(call, "u-1")
    # the first read of the records that name the erased notes (``StaleRecords.trim_and_list``)
    died = crash_at(
        "query", lambda request: request["ExpressionAttributeValues"].get(":prefix") == {"S": IDEMPOTENT_REMEMBER}
    )

    first = delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"})
    second = delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"})

    assert died.crashed == 1
    assert first.status == 500 and second.status == 200
    assert second.body["erased"] == {"notes": 1, "versions": 0, "other": 2}
    assert SECRET_PLAN not in stored(aws)
    assert [sk for sk in partition(aws, TEAM) if sk.startswith(("idem#", "inj#"))] == []


def extract_in_team(call, user, *facts_cited):
    """An extraction in the team's thread ``t-<user>`` by ``user`` that writes ``facts_cited``; its note ids."""
    scripted_models().extraction = FakeChatModel(
        reply=lambda s, p: {"facts": [{"text": text, "messages": [0]} for text in facts_cited]}
    )
    body = event_body("extract")
    body["context"] = shared("w-3", user=user, thread=f"t-{user}")
    answer = call("extract", body)
    assert answer.status == 200 and answer.body["status"] in ("written", "duplicate"), answer.body
    return body, [note["id"] for note in answer.body["notes"]]


def claim_note_ids(aws) -> dict[str, list[str]]:
    items = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :e)",
        ExpressionAttributeValues={":p": {"S": TEAM.key}, ":e": {"S": "extract#"}},
    )["Items"]
    return {item["sk"]["S"]: [one["S"] for one in item.get("note_ids", {}).get("L", [])] for item in items}


def test_a_members_erase_voids_the_extraction_claims_of_their_notes(call, aws):
    extract_in_team(call, "u-2", "u-2 moves to Porto in May")
    extract_in_team(call, "u-1", SECRET_PLAN)

    receipt = delete("/v1/memory/workspaces/w-3/notes", token=MEMBER, query={"author": "me"})

    assert receipt.body["erased"] == {"notes": 1, "versions": 0, "other": 1}
    assert list(claim_note_ids(aws)) == ["extract#t-u-1#" + event_body("extract")["extraction_id"]]


def test_a_dashboard_delete_takes_the_note_id_out_of_its_extraction_claim(call, aws):
    body, (kept, gone) = extract_in_team(call, "u-1", SECRET_PLAN, "u-1 prefers tea over coffee")

    assert delete(f"/v1/memory/workspaces/w-3/notes/{gone}").status == 204

    assert list(claim_note_ids(aws).values()) == [[kept]]
    again = call("extract", body).body
    assert again["status"] == "duplicate" and [note["id"] for note in again["notes"]] == [kept]
    assert delete(f"/v1/memory/workspaces/w-3/notes/{kept}").status == 204
    assert claim_note_ids(aws) == {}  # it names no note any more: it goes, as a flush claim does


def test_an_erase_of_the_scope_takes_every_extraction_claim(call, aws):
    extract_in_team(call, "u-1", SECRET_PLAN)

    assert delete("/v1/memory/workspaces/w-3", token=ADMIN).status == 200

    assert partition(aws, TEAM) == []
