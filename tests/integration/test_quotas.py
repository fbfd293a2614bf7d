"""docs/api.md §6 "Quotas": notes per UTC day (429 with Retry-After) and stored characters (422), per scope;
never a silent drop, and nothing written by a refused write."""

from __future__ import annotations

from tests.support.events import event_body
from tests.support.fakes import FakeChatModel
from tests.support.faults import ScriptedClient, conflict, provide_clients
from tests.support.management import USER, local_auth, manage  # noqa: F401 - the fixture applies here
from tests.support.models import scripted_models
from tests.support.scopes import note_texts, private, shared

SECONDS_TO_MIDNIGHT = 13 * 3600 + 45 * 60  # the tests' clock is 10:15:00 UTC


def _remember(call, text, context=None):
    return call("remember", {"context": context or private(), "arguments": {"text": text}})


def _notes(aws, pk="user#u-1"):
    return note_texts(aws, pk)


def test_remember_over_the_daily_count_is_429_with_retry_after_to_midnight(call, aws, quotas):
    quotas(notes=3)
    for number in range(3):
        assert _remember(call, f"note {number}").status == 201

    refused = _remember(call, "one too many")

    assert refused.status == 429
    assert refused.body["error"]["code"] == "quota_exceeded"
    assert refused.headers["Retry-After"] == str(SECONDS_TO_MIDNIGHT)
    assert _notes(aws) == ["note 0", "note 1", "note 2"]


def test_the_daily_count_is_per_scope(call, aws, quotas):
    quotas(notes=1)
    assert _remember(call, "mine").status == 201

    assert _remember(call, "a colleague's", private("u-2")).status == 201
    assert _remember(call, "the team's", shared("w-3")).status == 201
    assert _remember(call, "mine again").status == 429


def test_a_flush_over_the_daily_count_fails_with_that_reason_and_writes_nothing(call, aws, quotas, monkeypatch):
    quotas(notes=1)
    assert _remember(call, "today's only note", shared("w-3", thread="t-9")).status == 201
    scripted_models().flush = FakeChatModel(reply=lambda s, p: "Summary.")

    answer = call("flush", event_body("flush")).body

    assert answer["status"] == "failed"
    assert "quota_exceeded" in answer["reason"]
    assert _notes(aws, "ws#w-3") == ["today's only note"]


def test_a_note_over_the_characters_quota_is_422_and_nothing_is_written(call, aws, quotas):
    quotas(chars=50)
    assert _remember(call, "x" * 40).status == 201

    refused = _remember(call, "y" * 11)

    assert refused.status == 422
    assert refused.body["error"]["code"] == "quota_exceeded"
    assert _notes(aws) == ["x" * 40]
    assert _remember(call, "z" * 10).status == 201  # exactly at the quota is allowed


def test_the_document_counts_towards_the_characters_quota(call, aws, quotas):
    quotas(chars=100)
    assert _remember(call, "n" * 30).status == 201
    update = {"context": private(), "arguments": {"content": "d" * 70}}
    assert call("update_memory", update).status == 200

    too_long = call("update_memory", {"context": private(), "arguments": {"content": "d" * 71}})
    note = _remember(call, "one more")
    shorter = call("update_memory", {"context": private(), "arguments": {"content": "d" * 20}})

    assert (too_long.status, too_long.body["error"]["code"]) == (422, "quota_exceeded")
    assert note.status == 422
    assert shorter.status == 422  # the 70 characters stay in the history: a shorter version frees nothing
    note_id = _notes_ids(aws)[0]
    assert manage("personal_delete_note", token=USER, path=f"/v1/memory/personal/notes/{note_id}").status == 204
    assert call("update_memory", {"context": private(), "arguments": {"content": "d" * 20}}).status == 200


def _notes_ids(aws, pk="user#u-1"):
    items = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        ExpressionAttributeValues={":p": {"S": pk}, ":n": {"S": "note#"}},
    )["Items"]
    return [f"{item['day']['S']}.{int(item['position']['N'])}" for item in items]


def test_a_dashboard_edit_over_the_quota_is_422_and_the_document_unchanged(aws, quotas):
    quotas(chars=10)

    refused = manage("personal_put_document", token=USER, body={"content": "x" * 11, "expected_version": 0})

    assert (refused.status, refused.body["error"]["code"]) == (422, "quota_exceeded")
    assert manage("personal_document", token=USER).body["document"]["version"] == 0


def test_deleting_a_note_gives_its_characters_back(call, aws, quotas):
    quotas(chars=20)
    note = _remember(call, "a" * 20).body["note"]
    assert _remember(call, "b").status == 422

    deleted = manage("personal_delete_note", token=USER, path=f"/v1/memory/personal/notes/{note['id']}")

    assert deleted.status == 204
    assert _remember(call, "b" * 20).status == 201


def test_a_note_whose_transaction_conflicts_on_the_shared_counter_is_sent_again(call, aws):
    """Concurrent writers of one scope share its characters counter: DynamoDB cancels one transaction with a
    TransactionConflict, which did nothing; the note is sent again, written once."""
    conflicts = iter([True, True])

    def conflicting(real, **kwargs):
        if next(conflicts, False):
            raise conflict()
        return real(**kwargs)

    provide_clients(lambda client: ScriptedClient(client, transact_write_items=conflicting))

    answer = _remember(call, "written despite two conflicts")

    assert answer.status == 201
    assert _notes(aws) == ["written despite two conflicts"]


def _notes_today():
    return manage("personal_document", path="/v1/memory/personal/usage", token=USER).body["notes_today"]


def test_a_note_refused_in_its_transaction_counts_neither_today_nor_against_the_daily_quota(call, aws, quotas):
    """The day's position is taken before the note's transaction; a transaction that is cancelled (here by
    the characters quota) gives it back, so notes_today counts only notes written."""
    quotas(notes=2, chars=50)
    assert _remember(call, "x" * 40).status == 201

    assert _remember(call, "y" * 11).status == 422

    assert _notes_today() == 1
    written = _remember(call, "z" * 10)
    assert written.status == 201  # the refused note did not use up the day's second note
    assert written.body["note"]["position"] == 2  # no gap where the refused note was
    assert _notes(aws) == ["x" * 40, "z" * 10]
    assert _notes_today() == 2


def test_a_note_whose_transaction_conflicts_every_time_does_not_count_today(call, aws):
    assert _remember(call, "written").status == 201

    def conflicting(real, **kwargs):
        raise conflict()

    provide_clients(lambda client: ScriptedClient(client, transact_write_items=conflicting))

    assert _remember(call, "never written").status == 503
    assert _notes_today() == 1
    assert _notes(aws) == ["written"]
