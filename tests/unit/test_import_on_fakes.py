"""Import (docs/api.md §9 "Import") on the in-memory fakes (tests/support/fake_import.py and the world's note and
document stores): each note at its own instant through remember's pipeline, near-duplicates skipped, each note held to
its own day's quota, idempotent by ``import_id`` and resumable, never a note written twice. The stores' own behaviours
are the contract tests' (tests/support/import_contracts.py); these are the use case's, each in milliseconds."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.basics.errors import (
    ImportIdReused,
    ImportUnfinished,
    InvalidInput,
    StorageQuotaExceeded,
    StorageUnavailable,
)
from agent_memory.domain.document import HARD_LIMIT
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import ImportedAnswer
from agent_memory.edges.requests.imports import parse_import
from agent_memory.memory.importing import Importer
from agent_memory.storage.import_records import KEEP_S
from agent_memory.storage.keys import import_sk
from agent_memory.storage.usage_store import Quota
from tests.support.fake_import import FakeImportRecords
from tests.support.fake_stores import FakeStores, Write, fake_stores
from tests.support.imports import HISTORY, HISTORY_RECEIPT
from tests.support.scopes import PERSONAL, TEAM, stored

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5" * 3 + "Q7r8S9t0U1v2"


def body(import_id: str = "p1", notes: list[dict[str, Any]] = HISTORY, **extra: Any) -> dict[str, Any]:
    return {"import_id": import_id, "format": "notes/1", "notes": notes, **extra}


@dataclass
class Imports:
    """One world, the import's fake stores on it, and the memory service whose validated write saves a document."""

    quota: Quota | None = None
    stores: FakeStores = field(init=False)

    def __post_init__(self) -> None:
        self.stores = fake_stores(self.quota)
        self.records = FakeImportRecords(self.stores.world)

    @property
    def faults(self) -> Any:
        return self.stores.world.faults

    def importer(self, **options: Any) -> Importer[Write]:
        return Importer(self.stores.notes, self.records, self.stores.memory_service(), **options)

    def run(self, payload: dict[str, Any] | None = None, scope: Scope = PERSONAL, **options: Any) -> dict[str, Any]:
        answer: ImportedAnswer = self.importer(**options).run(parse_import(payload or body(), scope))
        return answer.model_dump(mode="json")

    def notes(self, scope: Scope = PERSONAL) -> list[tuple[str, str, str]]:
        return [(note.id, note.text, note.created_at) for note in self.stores.notes.every_note(scope)]

    def everything(self) -> list[dict[str, Any]]:
        return [item for scope in (PERSONAL, TEAM) for item in self.stores.world.between(scope.key, "", "\uffff")]


@pytest.fixture
def imports() -> Imports:
    return Imports()


def _clock(step_s: float) -> Any:
    """A clock that moves ``step_s`` each time it is read (a slow table, simulated)."""
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


# --- written ----------------------------------------------------------------------------------------------


def test_the_notes_are_written_on_their_own_days_in_time_order(imports) -> None:
    answer = imports.run()

    assert answer == HISTORY_RECEIPT
    assert imports.notes() == [
        ("2026-09-02.1", "Allergic to penicillin", "2026-09-02T07:10:00.000Z"),
        ("2026-09-02.2", "Prefers window seats on long flights", "2026-09-02T08:30:00.000Z"),
        ("2026-09-14.1", "Moved to Lisbon in the spring", "2026-09-14T16:05:00.000Z"),  # +02:00 stored in UTC
        ("2026-12-03.1", "Training for the Porto half marathon", "2026-12-03T08:00:00.000Z"),
    ]
    assert {note.source for note in imports.stores.notes.every_note(PERSONAL)} == {"import"}
    assert imports.stores.world.item((PERSONAL.key, import_sk("p1")))["finished"] is True


def test_a_team_import_writes_each_note_as_its_author_s(imports) -> None:
    notes = [{**HISTORY[0], "author": "u-1"}, {**HISTORY[1], "author": "u-7"}]

    imports.run(body("zep-1", notes), TEAM)

    origins = [note.origin for note in imports.stores.notes.every_note(TEAM)]
    assert sorted(origins, key=lambda origin: origin.user_id) == [Origin("u-1", "zep-1"), Origin("u-7", "zep-1")]


def test_a_secret_in_a_note_and_the_document_is_redacted(imports) -> None:
    payload = body(
        notes=[{"text": f"the deploy key is {GITHUB_TOKEN}", "created_at": "2026-10-01T09:00:00Z"}],
        document=f"# Memory\n- deploy key {GITHUB_TOKEN}",
    )

    answer = imports.run(payload)

    assert answer["document_version"] == 1
    assert GITHUB_TOKEN not in repr(imports.everything())
    assert imports.notes()[0][1].startswith("the deploy key is [redacted: ")


def test_near_duplicates_of_the_scope_and_of_the_import_are_skipped_and_listed(imports) -> None:
    created = datetime(2026, 12, 3, 9, tzinfo=UTC)
    held = imports.stores.notes.append(
        PERSONAL, created=created, text=stored("Prefers metric units"), source="remember", origin=Origin("u-1", "t")
    )
    notes = [
        {"text": "prefers the metric units.", "created_at": "2026-10-01T09:00:00Z"},
        {"text": "Drinks oat milk", "created_at": "2026-10-02T09:00:00Z"},
        {"text": "- drinks OAT milk", "created_at": "2026-10-03T09:00:00Z"},
    ]

    answer = imports.run(body(notes=notes))

    assert answer["notes"] == [{"index": 1, "id": "2026-10-02.1"}]
    assert answer["skipped"] == [{"index": 0, "similar": [held.id]}, {"index": 2, "similar": ["2026-10-02.1"]}]
    assert len(imports.notes()) == 2


def test_a_note_empty_after_cleaning_is_refused_and_the_others_written(imports) -> None:
    notes = [{"text": "\u200b\u200b", "created_at": "2026-10-01T09:00:00Z"}, HISTORY[0]]

    answer = imports.run(body(notes=notes))

    assert answer["refused"] == [{"index": 0, "code": "invalid_input", "message": "a note cannot be empty"}]
    assert [note["index"] for note in answer["notes"]] == [1]


def test_each_note_counts_against_its_own_day_and_never_against_today() -> None:
    imports = Imports(Quota(notes_per_day=2, chars=100_000))
    notes = [
        {"text": f"fact number {word}", "created_at": f"2026-10-01T0{n}:00:00Z"}
        for n, word in enumerate(["one", "two", "three"])
    ]
    notes.append({"text": "a fact of another day", "created_at": "2026-10-02T09:00:00Z"})

    answer = imports.run(body(notes=notes))

    assert [note["index"] for note in answer["notes"]] == [0, 1, 3]
    assert [(refused["index"], refused["code"]) for refused in answer["refused"]] == [(2, "quota_exceeded")]
    assert "2026-10-01" in answer["refused"][0]["message"]
    assert imports.stores.usage.notes_on(PERSONAL, "2026-12-03") == 0


def test_a_note_over_the_characters_quota_is_refused_and_the_others_written() -> None:
    imports = Imports(Quota(notes_per_day=10, chars=40))
    notes = [{"text": "x" * 30, "created_at": "2026-08-01T09:00:00Z"}, HISTORY[2]]  # written in this order

    answer = imports.run(body(notes=notes))

    assert [note["index"] for note in answer["notes"]] == [0]
    assert [(refused["index"], refused["code"]) for refused in answer["refused"]] == [(1, "quota_exceeded")]


# --- the document -------------------------------------------------------------------------------------------


def test_the_document_is_saved_first_as_an_import_version_and_once_for_every_page(imports) -> None:
    first = imports.run(body("page-1", HISTORY[:2], document="# Memory\n- likes tea"))
    second = imports.run(body("page-2", HISTORY[2:], document="# Memory\n- likes tea"))

    assert (first["document_version"], second["document_version"]) == (1, 1)
    ((document, reason, by),) = imports.stores.documents.kept(PERSONAL)
    assert (document.content, reason, by.thread_id) == ("# Memory\n- likes tea", "import", "page-1")


def test_a_document_over_the_hard_limit_once_redacted_is_refused_before_the_record(imports) -> None:
    aws_key = "AKIAIOSFODNN7EXAMPLE"  # 20 characters; its marker is longer
    document = "\n".join(["# Memory", *[f"- key {aws_key}" for _ in range(10)]])
    document += "\n- " + "x" * (HARD_LIMIT - len(document) - 3)
    assert len(document) == HARD_LIMIT

    with pytest.raises(InvalidInput, match="once redacted"):
        imports.run(body(document=document))

    assert imports.everything() == []


def test_a_document_refused_over_the_quota_spends_no_import_id() -> None:
    imports = Imports(Quota(notes_per_day=10, chars=200))

    with pytest.raises(StorageQuotaExceeded):
        imports.run(body(notes=HISTORY[:1], document="# Memory\n- " + "x" * 300))
    fixed = imports.run(body(notes=HISTORY[:1]))

    assert [note["index"] for note in fixed["notes"]] == [0]  # not import_id_reused: the refused body wrote nothing


def test_a_document_whose_save_failed_is_saved_by_the_call_that_continues(imports) -> None:
    imports.faults.fail("imports.document_saved")  # the version is saved, its number not recorded
    payload = body(document="# Memory\n- likes tea")

    with pytest.raises(StorageUnavailable):
        imports.run(payload)
    answer = imports.run(payload)

    assert answer["document_version"] == 1 and len(imports.stores.documents.kept(PERSONAL)) == 1
    assert len(answer["notes"]) == 4


# --- idempotent and resumable ---------------------------------------------------------------------------------


def test_the_same_import_id_again_answers_the_first_receipt_and_writes_nothing(imports) -> None:
    first = imports.run(body(document="# Memory\n- likes tea"))
    before = imports.everything()

    again = imports.run(body(document="# Memory\n- likes tea"))

    assert again == first and imports.everything() == before


def test_the_same_import_id_with_another_body_is_refused_and_writes_nothing(imports) -> None:
    imports.run()
    before = imports.everything()

    with pytest.raises(ImportIdReused):
        imports.run(body(notes=HISTORY[:1]))

    assert imports.everything() == before


def test_an_import_out_of_time_stops_and_the_same_request_continues_it(imports) -> None:
    outcomes = []
    for _ in range(3):
        try:
            outcomes.append(imports.run(clock=_clock(8.0)))  # a 20 s budget: two notes a call
        except ImportUnfinished as unfinished:
            outcomes.append(unfinished.code)

    assert outcomes == ["import_unfinished", HISTORY_RECEIPT, HISTORY_RECEIPT]
    assert len(imports.notes()) == 4


def test_a_resumed_import_skips_a_repeat_of_its_own_earlier_note_past_the_newest_notes(imports) -> None:
    created = datetime(2026, 12, 3, 9, tzinfo=UTC)
    imports.stores.notes.append(
        PERSONAL, created=created, text=stored("Prefers metric units"), source="remember", origin=Origin("u-1", "t")
    )
    notes = [
        {"text": "Drinks oat milk", "created_at": "2026-10-01T09:00:00Z"},
        {"text": "Walks to work", "created_at": "2026-10-02T09:00:00Z"},
        {"text": "- drinks OAT milk", "created_at": "2026-10-03T09:00:00Z"},
    ]

    with pytest.raises(ImportUnfinished):
        imports.run(body(notes=notes), clock=_clock(8.0), held_window=1)
    answer = imports.run(body(notes=notes), clock=_clock(8.0), held_window=1)

    assert answer["skipped"] == [{"index": 2, "similar": ["2026-10-01.1"]}]
    assert [text for _, text, _ in imports.notes()] == ["Drinks oat milk", "Walks to work", "Prefers metric units"]


def test_a_note_whose_answers_were_lost_is_written_once(imports) -> None:
    imports.faults.lose_answers("notes.append", times=3)  # applied; every answer lost: the store settles it

    assert imports.run() == HISTORY_RECEIPT
    assert len(imports.notes()) == 4


def test_a_call_that_dies_after_a_note_never_writes_it_again(imports) -> None:
    """The note's outcome is in the note's own transaction: a call that fails right after it resumes past it (the
    failed note's place is abandoned, so it is written at the next one)."""
    imports.faults.before("notes.append", lambda: None)  # the first note goes through
    imports.faults.before("notes.append", lambda: imports.faults.fail("notes.append"))  # the second fails

    with pytest.raises(StorageUnavailable):
        imports.run()
    answer = imports.run()

    assert [note["id"] for note in answer["notes"]] == ["2026-09-02.1", "2026-09-02.3", "2026-09-14.1", "2026-12-03.1"]
    assert sorted(text for _, text, _ in imports.notes()) == sorted(note["text"] for note in HISTORY)  # each once


def test_a_receipt_that_could_not_be_kept_is_answered_from_the_outcomes(imports) -> None:
    imports.faults.fail("imports.finish")

    with pytest.raises(StorageUnavailable):
        imports.run()
    appends = imports.faults.seen.count("notes.append")
    answer = imports.run()

    assert answer == HISTORY_RECEIPT and imports.faults.seen.count("notes.append") == appends  # nothing written again


def test_another_call_writing_the_same_import_now_stops_this_one_before_a_note_is_written_twice(imports) -> None:
    def other_call_first() -> None:
        progress = imports.records.begin(PERSONAL, "p1", parse_import(body(), PERSONAL).fingerprint, now_epoch=0)
        imports.records.step(progress, progress.done, ["r", 2, "invalid_input", "the other call's outcome"])

    imports.faults.before("notes.append", other_call_first)

    with pytest.raises(ImportUnfinished, match="another call of this import"):
        imports.run()

    assert imports.notes() == []
    assert imports.stores.usage.notes_on(PERSONAL, "2026-09-02") == 0  # its position given back


def test_another_call_recording_a_skip_first_stops_this_one_too(imports) -> None:
    notes = [HISTORY[0], {"text": "\u200b", "created_at": "2026-10-01T09:00:00Z"}]  # the note, then the refusal

    def other_call_first() -> None:
        progress = imports.records.begin(
            PERSONAL, "p1", parse_import(body(notes=notes), PERSONAL).fingerprint, now_epoch=0
        )
        imports.records.step(progress, progress.done, ["r", 0, "invalid_input", "the other call's outcome"])

    imports.faults.before("imports.step", other_call_first)

    with pytest.raises(ImportUnfinished):
        imports.run(body(notes=notes))

    assert [text for _, text, _ in imports.notes()] == [HISTORY[0]["text"]]


def test_once_the_import_has_expired_the_same_id_imports_again_past_its_old_outcomes(imports) -> None:
    imports.run()
    for item in imports.stores.world.between(PERSONAL.key, "im", "im\uffff"):
        imports.stores.world.transact(
            "seed", [Write((PERSONAL.key, item["sk"]), lambda old: {**(old or {}), "expires_at": 1000})]
        )

    again = imports.run()

    assert again["notes"] == []  # run again: each note skipped as one already held
    assert sorted(skipped["index"] for skipped in again["skipped"]) == [0, 1, 2, 3]
    assert len(imports.notes()) == 4
    assert imports.stores.world.item((PERSONAL.key, import_sk("p1")))["expires_at"] > KEEP_S
