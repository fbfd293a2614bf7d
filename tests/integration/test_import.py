"""docs/api.md §9 "Import": the chat backend writes a platform's history (``notes/1``) or another deployment's
export (``agent-memory-export/1``) into one memory, each note at its own instant, through remember's pipeline;
idempotent by ``import_id``, resumable, and never touching another scope."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.domain.document import HARD_LIMIT
from agent_memory.domain.scope import Scope
from agent_memory.memory.importing import PAGE_NOTES, Importer
from agent_memory.storage.import_records import ImportRecords
from tests.support.consolidation import consolidate
from tests.support.imports import HISTORY, HISTORY_RECEIPT, notes_body, post_import, stored_notes
from tests.support.management import local_auth  # noqa: F401 - the fixture applies
from tests.support.people import delete, export_all, fill, get, partition
from tests.support.scopes import private, shared

PERSONAL = Scope("personal", "u-1")
NEIGHBOUR = Scope("personal", "u-2")
TEAM = Scope("team", "w-3")
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "Q7r8S9t0U1v2"


def _everything(aws) -> dict[str, list[str]]:
    return {scope.key: sorted(partition(aws, scope)) for scope in (PERSONAL, NEIGHBOUR, TEAM)}


def test_notes_are_stored_on_their_own_days_in_time_order(aws):
    answer = post_import("users", "u-1", notes_body("mem0-p1", HISTORY))

    assert answer.status == 200, answer.body
    assert answer.body == HISTORY_RECEIPT
    notes = stored_notes(aws, PERSONAL.key)
    assert [(n["sk"], n["created_at"], n["source"]) for n in notes] == [
        ("note#2026-09-02#000000001", "2026-09-02T07:10:00.000Z", "import"),
        ("note#2026-09-02#000000002", "2026-09-02T08:30:00.000Z", "import"),
        ("note#2026-09-14#000000001", "2026-09-14T16:05:00.000Z", "import"),  # +02:00 stored in UTC
        ("note#2026-12-03#000000001", "2026-12-03T08:00:00.000Z", "import"),
    ]
    # listed on their days by the dashboard, and recalled
    listed = get("/v1/memory/personal/notes", query={"before": "2026-09-03", "days": "1"}).body
    assert [n["text"] for day in listed["days"] for n in day["notes"]] == [
        "Prefers window seats on long flights",
        "Allergic to penicillin",
    ]


def test_the_imported_notes_are_recalled(call, aws):
    post_import("users", "u-1", notes_body("mem0-p1", HISTORY))

    recalled = call("recall", {"context": private(), "arguments": {"query": "penicillin allergy"}}).body["notes"]

    assert recalled[0]["text"] == "Allergic to penicillin" and recalled[0]["day"] == "2026-09-02"


def test_the_same_import_id_again_answers_the_first_receipt_and_writes_nothing(aws):
    first = post_import("users", "u-1", notes_body("mem0-p1", HISTORY, document="# Memory\n- likes tea"))
    before = _everything(aws)

    again = post_import("users", "u-1", notes_body("mem0-p1", HISTORY, document="# Memory\n- likes tea"))

    assert again.status == 200 and again.body == first.body
    assert _everything(aws) == before
    assert get("/v1/memory/personal/document/versions").body["versions"][0]["reason"] == "import"


def test_the_same_import_id_with_another_body_is_422_and_writes_nothing(aws):
    post_import("users", "u-1", notes_body("mem0-p1", HISTORY))
    before = _everything(aws)

    answer = post_import("users", "u-1", notes_body("mem0-p1", HISTORY[:1]))

    assert answer.status == 422 and answer.body["details"][0]["type"] == "import_id_reused"
    assert _everything(aws) == before


def test_a_secret_in_an_imported_note_and_document_is_redacted(aws):
    body = notes_body(
        "p1",
        [{"text": f"the deploy key is {GITHUB_TOKEN}", "created_at": "2026-10-01T09:00:00Z"}],
        document=f"# Memory\n- deploy key {GITHUB_TOKEN}",
    )

    answer = post_import("users", "u-1", body)

    assert answer.status == 200 and answer.body["document_version"] == 1
    stored = aws.scan(TableName="MemoryTable")["Items"]
    assert GITHUB_TOKEN not in repr(stored)
    assert stored_notes(aws, PERSONAL.key)[0]["text"].startswith("the deploy key is [redacted: ")


def test_near_duplicates_of_the_scope_and_of_the_import_are_skipped_and_listed(call, aws):
    call("remember", {"context": private(), "arguments": {"text": "Prefers metric units"}})
    notes = [
        {"text": "prefers the metric units.", "created_at": "2026-10-01T09:00:00Z"},
        {"text": "Drinks oat milk", "created_at": "2026-10-02T09:00:00Z"},
        {"text": "- drinks OAT milk", "created_at": "2026-10-03T09:00:00Z"},
    ]

    answer = post_import("users", "u-1", notes_body("p1", notes))

    assert answer.body["notes"] == [{"index": 1, "id": "2026-10-02.1"}]
    assert answer.body["skipped"] == [
        {"index": 0, "similar": ["2026-12-03.1"]},
        {"index": 2, "similar": ["2026-10-02.1"]},
    ]
    assert len(stored_notes(aws, PERSONAL.key)) == 2


@pytest.mark.parametrize("empty", ["\u200b\u200b", "", "   "], ids=["invisible", "nothing", "blank"])
def test_a_note_empty_after_cleaning_is_refused_and_the_others_written(aws, empty):
    notes = [{"text": empty, "created_at": "2026-10-01T09:00:00Z"}, HISTORY[0]]

    answer = post_import("users", "u-1", notes_body("p1", notes))

    assert answer.status == 200
    assert answer.body["refused"] == [{"index": 0, "code": "invalid_input", "message": "a note cannot be empty"}]
    assert [n["index"] for n in answer.body["notes"]] == [1]


def test_each_note_counts_against_its_own_day_and_never_against_today(aws, monkeypatch):
    monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_DAY", "2")
    bootstrap.reset()
    notes = [
        {"text": f"fact number {word}", "created_at": f"2026-10-01T0{n}:00:00Z"}
        for n, word in enumerate(["one", "two", "three"])
    ]
    notes.append({"text": "a fact of another day", "created_at": "2026-10-02T09:00:00Z"})

    answer = post_import("users", "u-1", notes_body("p1", notes))

    assert [n["index"] for n in answer.body["notes"]] == [0, 1, 3]
    assert [(r["index"], r["code"]) for r in answer.body["refused"]] == [(2, "quota_exceeded")]
    assert "2026-10-01" in answer.body["refused"][0]["message"]
    assert get("/v1/memory/personal/usage").body["notes_today"] == 0


def test_a_team_import_counts_each_note_to_its_author(aws):
    notes = [{**HISTORY[0], "author": "u-1"}, {**HISTORY[1], "author": "u-7"}]

    answer = post_import("workspaces", "w-3", notes_body("zep-1", notes))

    assert answer.status == 200, answer.body
    origins = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        ExpressionAttributeValues={":p": {"S": TEAM.key}, ":n": {"S": "note#"}},
    )["Items"]
    assert sorted(item["origin_user_id"]["S"] for item in origins) == ["u-1", "u-7"]
    assert {item["origin_thread_id"]["S"] for item in origins} == {"zep-1"}


def test_a_foreign_scope_is_never_touched(call, aws):
    fill(call, private("u-2"))
    fill(call, shared("w-3"))
    others = {scope.key: sorted(partition(aws, scope)) for scope in (NEIGHBOUR, TEAM)}

    post_import("users", "u-1", notes_body("p1", HISTORY, document="# Memory"))
    post_import("users", "u-1", notes_body("p1", HISTORY, document="# Memory"))

    assert {scope.key: sorted(partition(aws, scope)) for scope in (NEIGHBOUR, TEAM)} == others
    assert len(stored_notes(aws, PERSONAL.key)) == 4


BAD = {
    "no offset": notes_body("p1", [{"text": "x", "created_at": "2026-10-01T09:00:00"}]),
    "not a date": notes_body("p1", [{"text": "x", "created_at": "last tuesday"}]),
    "in the future": notes_body("p1", [{"text": "x", "created_at": "2026-12-04T09:00:00Z"}]),
    "before 1970": notes_body("p1", [{"text": "x", "created_at": "1969-12-31T23:00:00Z"}]),
    "unknown format": {"import_id": "p1", "format": "mem0/1", "notes": []},
    "unknown key": notes_body("p1", [{"text": "x", "created_at": "2026-10-01T09:00:00Z", "user_id": "u-2"}]),
    "bad import id": notes_body("p 1", []),
    "another user as author": notes_body("p1", [{"text": "x", "created_at": "2026-10-01T09:00:00Z", "author": "u-2"}]),
    "too many notes": notes_body(
        "p1", [{"text": f"x{n}", "created_at": "2026-10-01T09:00:00Z"} for n in range(PAGE_NOTES + 1)]
    ),
    "a good note then a bad one": notes_body("p1", [HISTORY[0], {"text": "x", "created_at": "soon"}]),
    "a document over the hard limit": notes_body("p1", [HISTORY[0]], document="# Memory\n" + "- a fact\n" * 3200),
}


@pytest.mark.parametrize("body", BAD.values(), ids=BAD.keys())
def test_bad_input_is_422_and_writes_nothing(aws, body):
    answer = post_import("users", "u-1", body)

    assert answer.status == 422, answer.body
    assert answer.body["error"]["code"] == "invalid_input"
    assert partition(aws, PERSONAL) == []


def test_a_document_over_the_hard_limit_once_redacted_is_422_and_writes_nothing(aws):
    """The bound holds for the document as it would be stored: a secret's marker is longer than some secrets, and a
    document that only grows past it there would be compressed by a model, which the import never asks."""
    aws_key = "AKIAIOSFODNN7EXAMPLE"  # 20 characters; its marker is longer
    lines = ["# Memory", *[f"- a fact {n:05d} and more words to fill the line" for n in range(480)]]
    document = "\n".join([*lines, *[f"- key {aws_key}" for _ in range(10)]])
    document += "\n- " + "x" * (HARD_LIMIT - len(document) - 3)
    assert len(document) == HARD_LIMIT

    answer = post_import("users", "u-1", notes_body("p1", [HISTORY[0]], document=document))
    fixed = post_import("users", "u-1", notes_body("p1", [HISTORY[0]], document=lines[0]))

    assert answer.status == 422, answer.body
    assert answer.body["details"][0]["loc"] == ["body", "document"]
    assert fixed.status == 200, fixed.body  # the id was not spent on the refused body


def test_a_document_refused_over_the_quota_spends_no_import_id(aws, monkeypatch):
    monkeypatch.setenv("MEMORY_QUOTA_CHARS", "200")
    bootstrap.reset()

    refused = post_import("users", "u-1", notes_body("p1", [HISTORY[0]], document="# Memory\n- " + "x" * 300))
    fixed = post_import("users", "u-1", notes_body("p1", [HISTORY[0]]))

    assert refused.status == 422 and refused.body["error"]["code"] == "quota_exceeded"
    assert fixed.status == 200, fixed.body  # not import_id_reused: the refused body wrote nothing
    assert [n["index"] for n in fixed.body["notes"]] == [0]


def test_a_team_note_without_its_author_and_a_body_that_is_not_json_are_refused(aws):
    no_author = post_import("workspaces", "w-3", notes_body("p1", [HISTORY[0]]))
    not_json = post_import("users", "u-1", "{not json")

    assert no_author.status == 422 and no_author.body["details"][0]["loc"] == ["body", "notes", 0, "author"]
    assert not_json.status == 400
    assert partition(aws, TEAM) == [] and partition(aws, PERSONAL) == []


def _jumping_importer(step_s: float, **options: Any) -> Importer:
    """The graph's importer with a clock that moves ``step_s`` each time it is read (a slow table, simulated)."""
    graph = bootstrap.services()
    ticks = itertools.count()
    records = ImportRecords(graph.dynamodb, graph.settings.table_name)
    return Importer(graph.notes, records, graph.memory_service, clock=lambda: next(ticks) * step_s, **options)


def test_an_import_out_of_time_answers_503_and_the_same_request_continues_it(aws):
    bootstrap.provide(importer=_jumping_importer(8.0))  # 20 s: two notes a call
    body = notes_body("p1", HISTORY)

    answers = [post_import("users", "u-1", body) for _ in range(3)]

    assert [a.status for a in answers] == [503, 200, 200]
    assert answers[0].body["error"]["code"] == "import_unfinished" and answers[0].headers["Retry-After"] == "1"
    assert [n["index"] for n in answers[1].body["notes"]] == [2, 1, 0, 3] and answers[2].body == answers[1].body
    assert len(stored_notes(aws, PERSONAL.key)) == 4


def test_a_resumed_import_skips_a_repeat_of_its_own_earlier_note_past_the_newest_notes(call, aws):
    """The import's first call wrote "Drinks oat milk" on an old day; the scope's newer notes fill the window
    of newest notes the resumed call compares with (one note here, 2,000 in a deployment), so only the
    import's log still knows it."""
    call("remember", {"context": private(), "arguments": {"text": "Prefers metric units"}})
    bootstrap.provide(importer=_jumping_importer(8.0, held_window=1))  # two notes a call
    notes = [
        {"text": "Drinks oat milk", "created_at": "2026-10-01T09:00:00Z"},
        {"text": "Walks to work", "created_at": "2026-10-02T09:00:00Z"},
        {"text": "- drinks OAT milk", "created_at": "2026-10-03T09:00:00Z"},
    ]

    answers = [post_import("users", "u-1", notes_body("p1", notes)) for _ in range(2)]

    assert [a.status for a in answers] == [503, 200]
    assert answers[1].body["skipped"] == [{"index": 2, "similar": ["2026-10-01.1"]}]
    assert [n["text"] for n in stored_notes(aws, PERSONAL.key)] == [
        "Drinks oat milk",
        "Walks to work",
        "Prefers metric units",
    ]


class RecordsRacedByAnotherCall(ImportRecords):
    """Import records on which another call of the same import records an outcome just after this call began."""

    def begin(self, scope, import_id, fingerprint, *, now_epoch):
        progress = super().begin(scope, import_id, fingerprint, now_epoch=now_epoch)
        self.step(progress, progress.done, ["r", 0, "invalid_input", "the other call's outcome"])
        return progress


def test_another_call_of_the_same_import_running_now_is_503_and_nothing_is_written_twice(aws):
    graph = bootstrap.services()
    records = RecordsRacedByAnotherCall(graph.dynamodb, graph.settings.table_name)
    bootstrap.provide(importer=Importer(graph.notes, records, graph.memory_service))

    answer = post_import("users", "u-1", notes_body("p1", HISTORY[:1]))

    assert answer.status == 503 and answer.body["error"]["code"] == "import_unfinished"
    assert stored_notes(aws, PERSONAL.key) == []


def test_an_export_imports_into_another_deployment_with_its_dates(call, aws):
    fill(call, notes=3, versions=2)
    from tests.support.scopes import write_note

    write_note(PERSONAL, datetime(2026, 10, 1, 9, tzinfo=UTC), "an older note")
    pages = export_all()

    answers = [post_import("users", "u-9", {**page, "import_id": f"restore-{n}"}) for n, page in enumerate(pages)]

    assert {a.status for a in answers} == {200}
    assert sum(len(a.body["notes"]) for a in answers) == 4
    assert [a.body["document_version"] for a in answers] == [1] * len(pages)  # each page's document saved once
    mine = [(n["sk"], n["text"], n["created_at"]) for n in stored_notes(aws, PERSONAL.key)]
    theirs = [(n["sk"], n["text"], n["created_at"]) for n in stored_notes(aws, Scope("personal", "u-9").key)]
    assert theirs == mine


def test_imported_notes_over_a_week_old_are_folded_by_the_next_nights_run(aws, model):
    post_import("users", "u-1", notes_body("p1", HISTORY))

    result = consolidate()

    assert result["groups_done"] == 1
    folded = {n["text"]: n for n in export_all()[-1]["notes"]}
    assert [text for text, n in folded.items() if n["consolidated"]] == [
        "Allergic to penicillin",
        "Prefers window seats on long flights",
        "Moved to Lisbon in the spring",
    ]
    assert folded["Training for the Porto half marathon"]["consolidated"] is False  # today's: not due yet
    document = get("/v1/memory/personal/document").body["document"]["content"]
    assert "Allergic to penicillin" in document and "Porto" not in document


def test_each_notes_outcome_is_a_small_item_of_its_own_whatever_the_imports_size(aws):
    """A note's transaction writes its outcome, a few dozen bytes (2 write units), not the import's growing
    record; the receipt is kept on the record once, and an erase of the scope takes the outcomes with it."""
    history = [
        {"text": f"Fact number {n} about the trip", "created_at": f"2026-09-02T08:{n:02d}:00Z"} for n in range(40)
    ]

    answer = post_import("users", "u-1", notes_body("p1", history))

    items = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :i)",
        ExpressionAttributeValues={":p": {"S": PERSONAL.key}, ":i": {"S": "imp"}},
    )["Items"]
    outcomes = [item for item in items if item["sk"]["S"].startswith("imp#p1#")]
    assert answer.status == 200 and len(answer.body["notes"]) == len(outcomes) == 40
    assert max(len(json.dumps(item)) for item in outcomes) < 200  # the 40th no bigger than the first: < 1 KB
    assert post_import("users", "u-1", notes_body("p1", history)).body == answer.body
    assert delete("/v1/memory/personal").status == 200
    assert partition(aws, PERSONAL) == []


def test_once_the_import_has_expired_the_same_id_imports_again_past_its_old_outcomes(aws):
    """The TTL removes records late: an expired record is begun afresh, and its outcomes left behind are
    neither read as this import's nor in the way of its own."""
    post_import("users", "u-1", notes_body("p1", HISTORY))
    for item in aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :i)",
        ExpressionAttributeValues={":p": {"S": PERSONAL.key}, ":i": {"S": "imp"}},
    )["Items"]:
        aws.update_item(
            TableName="MemoryTable",
            Key={"pk": item["pk"], "sk": item["sk"]},
            UpdateExpression="SET expires_at = :past",
            ExpressionAttributeValues={":past": {"N": "1000"}},
        )

    again = post_import("users", "u-1", notes_body("p1", HISTORY))

    assert again.status == 200 and again.body["notes"] == []  # run again: each note skipped as one already held
    assert sorted(skipped["index"] for skipped in again.body["skipped"]) == [0, 1, 2, 3]
    assert len(stored_notes(aws, PERSONAL.key)) == 4
