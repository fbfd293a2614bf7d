"""The behaviours the import's ports promise (``memory.ports.ImportProgress`` and ``ImportedNotes``), written once
and checked against both the DynamoDB stores (tests/integration/test_import_store_contracts.py, on moto) and the
in-memory fakes (tests/unit/test_fake_import_store_contracts.py), so the import's tests on the fakes mean what they
say.

Each contract takes ``make``: a factory of the stores under test (``ImportStores``) on one fresh table, its notes
held to ``quota`` when given. Time is the ``now_epoch`` each call is given, so a record's TTL runs out by beginning
later. Observations go through the ports (``begin``'s progress, ``newest_texts``) and the day's count.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

import pytest

from agent_memory.basics.errors import NotesQuotaExceeded
from agent_memory.domain.notes import Note, Origin
from agent_memory.storage.import_records import KEEP_S, Progress
from agent_memory.storage.usage_store import Quota
from tests.support.scopes import PERSONAL, TEAM, stored


class ImportStores(NamedTuple):
    """The stores under test, on one table: an import's records and the notes (with their usage counter)."""

    records: Any
    notes: Any


MakeImportStores = Callable[..., ImportStores]  # make(quota=None)
NOW = 1_796_000_000
AT = datetime(2026, 9, 2, 7, 10, tzinfo=UTC)
DAY = "2026-09-02"


def _begin(stores: ImportStores, fingerprint: str = "f-1", *, now: int = NOW, import_id: str = "p1") -> Progress:
    progress: Progress = stores.records.begin(PERSONAL, import_id, fingerprint, now_epoch=now)
    return progress


def _write(stores: ImportStores, progress: Progress, done: int, text: str = "Allergic to penicillin") -> Note:
    def completing(note: Note) -> Any:
        return stores.records.step_item(progress, done, ["n", done, note.id])

    note: Note = stores.notes.append(
        PERSONAL, created=AT, text=stored(text), source="import", origin=Origin("u-1", "import"), completing=completing
    )
    return note


def a_new_id_begins_with_nothing_done_and_a_second_begin_reads_its_record(make: MakeImportStores) -> None:
    stores = make()

    first = _begin(stores)
    again = _begin(stores, "f-other", now=NOW + 60)

    assert (first.fingerprint, first.log, first.document_version, first.finished) == ("f-1", [], None, False)
    assert first.expires_at == NOW + KEEP_S
    assert (again.fingerprint, again.log, again.expires_at) == ("f-1", [], NOW + KEEP_S)  # the first body's
    assert _begin(stores, import_id="p2").log == [] and stores.records.begin(TEAM, "p1", "f-9", now_epoch=NOW).log == []


def each_outcome_is_recorded_once_and_read_back_in_order(make: MakeImportStores) -> None:
    stores = make()
    progress = _begin(stores)

    note = _write(stores, progress, 0)
    assert stores.records.step(progress, 1, ["s", 1, [note.id]]) is True
    assert stores.records.step(progress, 2, ["r", 2, "invalid_input", "empty"]) is True
    assert stores.records.step(progress, 1, ["r", 1, "invalid_input", "another call's"]) is False

    assert _begin(stores).log == [["n", 0, note.id], ["s", 1, [note.id]], ["r", 2, "invalid_input", "empty"]]


def a_note_whose_outcome_another_call_recorded_first_is_not_written(make: MakeImportStores) -> None:
    stores = make()
    progress = _begin(stores)
    assert stores.records.step(progress, 0, ["r", 0, "invalid_input", "the other call's"]) is True

    with pytest.raises(Exception) as raised:  # the real store's ClientError, the fake's Cancelled
        _write(stores, progress, 0)

    assert stores.notes.completion_refused(raised.value) is True
    assert stores.notes.newest_texts(PERSONAL, limit=5) == []
    assert stores.notes.usage.notes_on(PERSONAL, DAY) == 0  # its position given back
    assert _write(stores, progress, 1).position == 1


def a_quota_refusal_is_not_the_outcomes_refusal(make: MakeImportStores) -> None:
    stores = make(Quota(notes_per_day=1, chars=10_000))
    progress = _begin(stores)
    _write(stores, progress, 0)

    with pytest.raises(NotesQuotaExceeded) as raised:
        _write(stores, progress, 1, "Prefers window seats")

    assert stores.notes.completion_refused(raised.value) is False
    assert stores.notes.completion_refused(RuntimeError("anything else")) is False
    assert _begin(stores).log == [["n", 0, f"{DAY}.1"]]


def the_documents_version_and_the_receipt_are_kept_on_the_record(make: MakeImportStores) -> None:
    stores = make()
    progress = _begin(stores)

    stores.records.document_saved(progress, 3)
    assert (_begin(stores).document_version, _begin(stores).finished) == (3, False)
    stores.records.finish(progress, [["n", 0, f"{DAY}.1"], ["s", 1, [f"{DAY}.1"]]])

    done = _begin(stores)
    assert (done.document_version, done.finished, done.log) == (3, True, [["n", 0, f"{DAY}.1"], ["s", 1, [f"{DAY}.1"]]])


def a_record_is_forgotten_only_while_it_holds_nothing(make: MakeImportStores) -> None:
    stores = make()
    fresh = _begin(stores)

    stores.records.forget(fresh)
    assert _begin(stores, "f-2").fingerprint == "f-2"  # begun afresh, with another body

    stores.records.document_saved(_begin(stores, "f-2"), 1)
    stores.records.forget(fresh)
    assert (_begin(stores).fingerprint, _begin(stores).document_version) == ("f-2", 1)  # kept
    other = _begin(stores, import_id="p2")
    stores.records.finish(other, [])
    stores.records.forget(other)
    assert _begin(stores, "f-3", import_id="p2").finished is True
    stores.records.forget(_begin(stores, import_id="gone"))
    stores.records.forget(_begin(stores, import_id="gone"))  # gone already: nothing happens


def an_expired_record_begins_afresh_past_its_old_outcomes(make: MakeImportStores) -> None:
    stores = make()
    old = _begin(stores)
    stores.records.step(old, 0, ["r", 0, "invalid_input", "old"])
    stores.records.step(old, 1, ["r", 1, "invalid_input", "old"])
    stores.records.finish(old, [])

    later = NOW + KEEP_S + 1
    new = _begin(stores, "f-new", now=later)

    assert (new.fingerprint, new.log, new.finished, new.expires_at) == ("f-new", [], False, later + KEEP_S)
    assert _write(stores, new, 0).position == 1  # its outcome 0 replaces the old one
    assert _begin(stores, now=later).log == [["n", 0, f"{DAY}.1"]]  # the old outcome 1 is not this import's


CONTRACTS = [
    a_new_id_begins_with_nothing_done_and_a_second_begin_reads_its_record,
    each_outcome_is_recorded_once_and_read_back_in_order,
    a_note_whose_outcome_another_call_recorded_first_is_not_written,
    a_quota_refusal_is_not_the_outcomes_refusal,
    the_documents_version_and_the_receipt_are_kept_on_the_record,
    a_record_is_forgotten_only_while_it_holds_nothing,
    an_expired_record_begins_afresh_past_its_old_outcomes,
]
