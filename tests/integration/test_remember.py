"""docs/api.md §3 ``remember``: cleaning, refusals, truncation, positions, provenance and concurrency."""

from __future__ import annotations

import pytest

from tests.support.scopes import private, shared


def _remember(call, text, context=None):
    return call("remember", {"context": context or private(), "arguments": {"text": text}})


def _notes(aws, pk="user#u-1"):
    return aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        ExpressionAttributeValues={":p": {"S": pk}, ":n": {"S": "note#"}},
    )["Items"]


def test_the_answer_is_the_note_as_the_contract_shows_it(call):
    answer = _remember(call, "Prefers metric units", private("u-1", thread="t-9"))

    assert answer.status == 201
    assert answer.body == {
        "note": {
            "id": "2026-12-03.1",
            "day": "2026-12-03",
            "position": 1,
            "text": "Prefers metric units",
            "created_at": "2026-12-03T10:15:00.000Z",
            "source": "remember",
            "consolidated": False,
            "origin": {"user_id": "u-1", "thread_id": "t-9"},
            "superseded_by": None,
        },
        "truncated": False,
        "redacted": [],
        "similar": [],
    }


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("- likes tea", "likes tea"),
        ("* likes tea", "likes tea"),
        ("• likes tea", "likes tea"),
        ("   -   likes tea  ", "likes tea"),
        ("likes\ntea\tand\r\ncoffee", "likes tea and  coffee"),
        ("bell\x07 and nul\x00 and esc\x1b[0m gone\x7f", "bell and nul and esc[0m gone"),
        ("- - nested bullet", "- nested bullet"),
        ("-no space is not a bullet", "-no space is not a bullet"),
        ("####### seven hashes is not a heading", "####### seven hashes is not a heading"),
        ("#hashtag is not a heading", "#hashtag is not a heading"),
        ("C# and F# are languages", "C# and F# are languages"),
    ],
)
def test_text_is_cleaned_before_it_is_stored(call, aws, raw, stored):
    answer = _remember(call, raw)

    assert answer.status == 201
    assert answer.body["note"]["text"] == stored
    assert _notes(aws)[0]["text"]["S"] == stored


@pytest.mark.parametrize("raw", ["", "   ", "\n\t\r", "- ", "*  ", "• \x00", "\x01\x02"])
def test_empty_after_cleaning_is_422(call, aws, raw):
    answer = _remember(call, raw)

    assert answer.status == 422
    assert answer.body["details"][0]["type"] == "empty_note"
    assert _notes(aws) == []


@pytest.mark.parametrize("raw", ["# Title", "## Section", "###### Deep", "- ## bullet heading", "  # padded"])
def test_a_heading_is_422(call, aws, raw):
    answer = _remember(call, raw)

    assert answer.status == 422
    assert answer.body["details"][0]["type"] == "heading"
    assert _notes(aws) == []


def test_text_over_2000_characters_is_capped_and_flagged(call, aws):
    answer = _remember(call, "a" * 1999 + "bcdef")

    assert answer.status == 201
    assert answer.body["truncated"] is True
    assert answer.body["note"]["text"] == "a" * 1999 + "b"
    assert len(_notes(aws)[0]["text"]["S"]) == 2000


def test_exactly_2000_characters_is_not_truncated(call):
    answer = _remember(call, "z" * 2000)

    assert answer.body["truncated"] is False
    assert len(answer.body["note"]["text"]) == 2000


def test_positions_count_up_within_the_day_and_per_scope(call):
    first = _remember(call, "one").body["note"]
    second = _remember(call, "two").body["note"]
    team = _remember(call, "team one", shared("w-a")).body["note"]

    assert (first["position"], second["position"], team["position"]) == (1, 2, 1)
    assert (first["id"], second["id"]) == ("2026-12-03.1", "2026-12-03.2")


def test_a_new_utc_day_starts_at_position_1(call, monkeypatch):
    from agent_memory import bootstrap

    _remember(call, "late")
    monkeypatch.setenv("MEMORY_NOW", "2026-12-04T00:00:00Z")
    bootstrap.reset()

    note = _remember(call, "early").body["note"]

    assert (note["day"], note["position"], note["id"]) == ("2026-12-04", 1, "2026-12-04.1")


def test_a_note_keeps_its_scope_in_the_sparse_index_of_due_scopes(call, aws):
    """docs/consolidation.md: the index holds one marker per scope with unconsolidated notes, never the notes."""
    _remember(call, "fact")
    _remember(call, "another")

    item = _notes(aws)[0]
    assert item["consolidated"] == {"BOOL": False} and "uc_pk" not in item
    marker = aws.get_item(TableName="MemoryTable", Key={"pk": {"S": "user#u-1"}, "sk": {"S": "consolidation#due"}})
    assert marker["Item"]["uc_pk"]["S"].startswith("uc#")
    rows = aws.query(
        TableName="MemoryTable",
        IndexName="Unconsolidated",
        KeyConditionExpression="uc_pk = :s",
        ExpressionAttributeValues={":s": marker["Item"]["uc_pk"]},
    )["Items"]
    assert [(row["pk"]["S"], row["oldest"]["S"], row["notes"]["N"]) for row in rows] == [
        ("user#u-1", item["created_at"]["S"], "2")
    ]


def test_25_parallel_remembers_in_one_scope_get_unique_positions(sandboxes, monkeypatch):
    # A counter increment whose answer is lost to a read timeout and retried leaves a gap (documented in
    # NoteStore.append); on a loaded machine the default 2 s would make this test about the machine.
    monkeypatch.setenv("MEMORY_DYNAMODB_READ_TIMEOUT_S", "10")
    answers = sandboxes(
        [
            ("remember", {"context": shared("w-a", thread=f"t-{i}"), "arguments": {"text": f"fact {i}"}})
            for i in range(25)
        ]
    )

    assert [a.status for a in answers] == [201] * 25
    assert sorted(a.body["note"]["position"] for a in answers) == list(range(1, 26))
    assert [a.body["note"]["text"] for a in answers] == [f"fact {i}" for i in range(25)]
    context = sandboxes([("context", {"context": shared("w-a")})])[0].body
    assert sorted(n["text"] for n in context["recent_notes"]) == sorted(f"fact {i}" for i in range(25))
    assert sorted(n["position"] for n in context["recent_notes"]) == list(range(1, 26))


def test_a_lagging_counter_never_overwrites_a_note(call, aws):
    """E.g. after a point-in-time restore: the counter says 0 but notes 1-3 exist."""
    for text in ("one", "two", "three"):
        _remember(call, text)
    aws.delete_item(TableName="MemoryTable", Key={"pk": {"S": "user#u-1"}, "sk": {"S": "day#2026-12-03"}})

    answer = _remember(call, "four")

    assert answer.status == 201
    assert answer.body["note"]["position"] == 4
    assert [item["text"]["S"] for item in _notes(aws)] == ["one", "two", "three", "four"]


def test_a_counter_far_behind_gives_up_with_503_and_writes_nothing(call, aws):
    for i in range(6):
        _remember(call, f"n{i}")
    aws.delete_item(TableName="MemoryTable", Key={"pk": {"S": "user#u-1"}, "sk": {"S": "day#2026-12-03"}})

    answer = _remember(call, "seventh")

    assert answer.status == 503
    assert answer.body["error"]["code"] == "storage_unavailable"
    assert "seventh" not in {item["text"]["S"] for item in _notes(aws)}
