"""docs/api.md §6: ``Idempotency-Key`` on remember, update_memory, PUT document and restore. The same key
within 24 hours, for the same scope and route, answers what the first call answered and writes nothing."""

from __future__ import annotations

import time

import pytest

from agent_memory import bootstrap
from local.token import mint
from tests.support.management import (
    USER,
    local_auth,  # noqa: F401 - the fixture applies here
    manage,
)
from tests.support.people import partition
from tests.support.scopes import TEAM, note_texts, private, shared

MEMBER = mint("u-2", ["w-3"])


def _notes(call):
    return [n["text"] for n in call("context", {"context": private()}).body["recent_notes"]]


def _stored(aws):
    """The scope's stored note texts (the context block would show a repeated note once)."""
    answer = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        ExpressionAttributeValues={":p": {"S": "user#u-1"}, ":n": {"S": "note#"}},
    )
    return [item["text"]["S"] for item in answer["Items"]]


def test_a_repeated_remember_is_answered_again_and_written_once(call, keyed, aws):
    body = {"context": private(), "arguments": {"text": "written once"}}

    first = keyed("remember", body, "k-1")
    again = keyed("remember", body, "k-1")

    assert (first.status, again.status) == (201, 201)
    assert again.body == first.body
    assert _stored(aws) == ["written once"]
    assert keyed("remember", body, "k-2").status == 201  # another key is another write
    assert _stored(aws) == ["written once", "written once"]


def test_a_repeated_update_memory_saves_one_version(call, keyed):
    body = {"context": private(), "arguments": {"content": "the document"}}

    answers = [keyed("update_memory", body, "k-doc") for _ in range(3)]

    assert {a.body["document"]["version"] for a in answers} == {1}
    assert call("context", {"context": private()}).body["document"]["version"] == 1


def test_a_refusal_is_replayed_as_it_was(call, keyed):
    call("update_memory", {"context": private(), "arguments": {"content": "v1"}})
    stale = {"context": private(document_version=0), "arguments": {"content": "stale"}}

    first, again = keyed("update_memory", stale, "k-stale"), keyed("update_memory", stale, "k-stale")

    assert first.status == again.status == 409 and again.body == first.body


def test_the_same_key_with_another_body_is_422_and_writes_nothing(call, keyed):
    keyed("remember", {"context": private(), "arguments": {"text": "one"}}, "k-1")

    answer = keyed("remember", {"context": private(), "arguments": {"text": "two"}}, "k-1")

    assert answer.status == 422
    assert _notes(call) == ["one"]


def test_the_key_is_per_scope(call, keyed):
    keyed("remember", {"context": private(), "arguments": {"text": "mine"}}, "k-1")
    other = keyed("remember", {"context": private("u-2"), "arguments": {"text": "mine"}}, "k-1")

    assert other.status == 201 and other.body["note"]["origin"]["user_id"] == "u-2"


@pytest.mark.parametrize("key", ["", "has space", "x" * 129, "k\n"])
def test_a_malformed_key_is_422(keyed, key):
    assert keyed("remember", {"context": private(), "arguments": {"text": "x"}}, key).status == 422


def test_dashboard_put_and_restore_honour_the_key(aws):
    headers = {"idempotency-key": "put-1"}
    body = {"content": "dashboard text", "expected_version": 0}

    first = manage("personal_put_document", token=USER, body=body, headers=headers)
    again = manage("personal_put_document", token=USER, body=body, headers=headers)

    assert first.status == again.status == 200 and again.body == first.body
    assert manage("personal_document", token=USER).body["document"]["version"] == 1
    manage("personal_put_document", token=USER, body={"content": "later", "expected_version": 1})
    path = "/v1/memory/personal/document/versions/1/restore"
    restore = {"expected_version": 2}
    r1 = manage("personal_restore", token=USER, path=path, body=restore, headers={"Idempotency-Key": "r-1"})
    r2 = manage("personal_restore", token=USER, path=path, body=restore, headers={"Idempotency-Key": "r-1"})
    assert r1.status == r2.status == 200 and r1.body == r2.body
    assert manage("personal_document", token=USER).body["document"]["version"] == 3


def test_a_quota_refusal_is_not_kept_under_its_key_so_the_same_retry_runs_again_later(call, keyed, monkeypatch):
    """A 429 passes with time: the key is given back, and the retry after the quota allows it is written."""
    body = {"context": private(user="u-quota"), "arguments": {"text": "one over the day's quota"}}
    monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_DAY", "1")
    bootstrap.reset()
    assert call("remember", {"context": private(user="u-quota"), "arguments": {"text": "the day's one"}}).status == 201

    refused = keyed("remember", body, "k-quota")
    monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_DAY", "5")
    bootstrap.reset()
    later = keyed("remember", body, "k-quota")

    assert (refused.status, refused.body["error"]["code"]) == (429, "quota_exceeded")
    assert later.status == 201
    assert "one over the day's quota" in _notes_of(call, "u-quota")


def _notes_of(call, user):
    return [n["text"] for n in call("context", {"context": private(user=user)}).body["recent_notes"]]


# --- a key is its caller's own (the same key from another member is another request) -----------------------


def _team(user, text):
    return {"context": shared("w-3", user=user, thread=f"t-{user}"), "arguments": {"text": text}}


def _team_notes(aws):
    return sorted(note_texts(aws, "ws#w-3"))


def test_another_members_key_is_another_request(call, keyed, aws):
    bob = keyed("remember", _team("u-bob", "bob's fact"), "msg-43")
    alice = keyed("remember", _team("u-alice", "alice's fact"), "msg-43")
    alice_again = keyed("remember", _team("u-alice", "alice's fact"), "msg-43")

    assert (bob.status, alice.status, alice_again.status) == (201, 201, 201)
    assert alice.body["note"]["origin"]["user_id"] == "u-alice" and alice_again.body == alice.body
    assert _team_notes(aws) == ["alice's fact", "bob's fact"]
    assert keyed("remember", _team("u-alice", "another"), "msg-43").status == 422  # her own key, reused


def test_another_members_key_is_another_request_on_the_dashboard_too(aws):
    path, headers = "/v1/memory/workspaces/w-3/document", {"Idempotency-Key": "put-43"}
    first = manage(
        "team_put_document", token=USER, path=path, body={"content": "u-1's", "expected_version": 0}, headers=headers
    )
    other = manage(
        "team_put_document", token=MEMBER, path=path, body={"content": "u-2's", "expected_version": 1}, headers=headers
    )

    assert (first.status, other.status) == (200, 200)
    assert other.body["document"]["version"] == 2 and other.body["document"]["content"] == "u-2's"


def _as_written_before_keys_named_their_caller(aws, caller):
    """Move the scope's idempotency records to the shape a service without callers in its keys wrote."""
    for item in aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :i)",
        ExpressionAttributeValues={":p": {"S": "ws#w-3"}, ":i": {"S": "idem#"}},
    )["Items"]:
        aws.delete_item(TableName="MemoryTable", Key={"pk": item["pk"], "sk": item["sk"]})
        item["sk"] = {"S": item["sk"]["S"].replace(f"#{caller}#", "#")}
        aws.put_item(TableName="MemoryTable", Item=item)


def test_a_record_written_before_the_upgrade_still_answers_its_own_request_once(call, keyed, aws):
    first = keyed("remember", _team("u-alice", "alice's fact"), "msg-43")
    _as_written_before_keys_named_their_caller(aws, "u-alice")

    again = keyed("remember", _team("u-alice", "alice's fact"), "msg-43")
    bob = keyed("remember", _team("u-bob", "bob's fact"), "msg-43")

    assert again.status == 201 and again.body == first.body
    assert bob.status == 201 and bob.body["note"]["origin"]["user_id"] == "u-bob"
    assert _team_notes(aws) == ["alice's fact", "bob's fact"]
    assert keyed("remember", _team("u-alice", "alice's fact"), "msg-43").body == first.body  # now under her key


def test_a_request_still_running_under_a_record_of_before_the_upgrade_is_503_and_holds_no_key(call, keyed, aws):
    body = _team("u-alice", "alice's fact")
    assert keyed("remember", body, "msg-43").status == 201
    _as_written_before_keys_named_their_caller(aws, "u-alice")
    aws.update_item(  # as its call left it while still running: its answer not stored yet
        TableName="MemoryTable",
        Key={"pk": {"S": "ws#w-3"}, "sk": {"S": "idem#remember#msg-43"}},
        UpdateExpression="SET #status = :running, lease_until = :until REMOVE answer, answer_status",
        ExpressionAttributeNames={"#status": "status"},
        ExpressionAttributeValues={":running": {"S": "in_progress"}, ":until": {"N": str(int(time.time()) + 30)}},
    )

    answer = keyed("remember", body, "msg-43")

    assert answer.status == 503 and _team_notes(aws) == ["alice's fact"]
    # the new key's claim is given back: its lease ended, a free key to the next claim
    given_back = aws.get_item(
        TableName="MemoryTable", Key={"pk": {"S": "ws#w-3"}, "sk": {"S": "idem#remember#u-alice#msg-43"}}
    )["Item"]
    assert (given_back["status"]["S"], given_back["lease_until"]["N"]) == ("in_progress", "0")
    assert [sk for sk in partition(aws, TEAM) if sk.startswith("idem#")] == [
        "idem#remember#msg-43",
        "idem#remember#u-alice#msg-43",
    ]
