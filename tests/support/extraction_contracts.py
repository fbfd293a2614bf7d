"""The behaviours the extraction's ports promise (``memory.ports.ExtractionClaims`` and ``ExtractionNotes``), written
once and checked against both the DynamoDB stores (tests/integration/test_extraction_store_contracts.py, on moto) and
the in-memory fakes (tests/unit/test_fake_extraction_store_contracts.py), so the extraction's tests on the fakes mean
what they say.

Each contract takes ``make``: a factory of the stores under test (``ExtractionStores``) on one fresh table. Time is
the ``now_epoch`` each call is given, so a lease or a TTL runs out by asking later. Observations go through the ports
(a claim's marker, ``notes.get_many``) and the day's count (``notes.usage.notes_on``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

import pytest

from agent_memory.domain.commands import ExtractCommand
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.extraction_store import CLAIM_TTL_S, LEASE_S, ExtractionMarker
from agent_memory.storage.note_items import KeyedNote
from tests.support.scopes import PERSONAL, TEAM, stored


class ExtractionStores(NamedTuple):
    """The stores under test, on one table: the claims and the notes (with their usage counter)."""

    claims: Any
    notes: Any


MakeExtractionStores = Callable[[], ExtractionStores]
NOW = 1_796_000_000
AT = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)
DAY = "2026-12-03"
IN_PROGRESS = ExtractionMarker("in_progress", ())


def command(scope: Scope = PERSONAL, *, thread: str = "t-1", extraction_id: str = "ext-1") -> ExtractCommand:
    return ExtractCommand(scope, Origin("u-1", thread), extraction_id, (("user", "I fly to Osaka."),))


def _claim(stores: ExtractionStores, token: str, *, now: int = NOW, **where: Any) -> ExtractionMarker | None:
    marker: ExtractionMarker | None = stores.claims.claim(command(**where), token=token, now_epoch=now)
    return marker


def _write(stores: ExtractionStores, token: str, text: str = "The user flies to Osaka.") -> Note:
    one = command()

    def recorded(note: Note) -> Any:
        return stores.claims.note_recorded(one, token=token, note_id=note.id)

    note: Note = stores.notes.append(
        PERSONAL,
        created=AT,
        text=stored(text),
        source="extraction",
        origin=Origin("u-1", "t-1", messages=(0,)),
        vector=None,
        completing=recorded,
    )
    return note


def a_free_id_is_claimed_once_and_a_second_claim_sees_the_first(make: MakeExtractionStores) -> None:
    stores = make()

    assert _claim(stores, "first") is None
    assert _claim(stores, "second") == IN_PROGRESS


def a_claim_whose_lease_ran_out_is_taken_over(make: MakeExtractionStores) -> None:
    stores = make()
    _claim(stores, "dead")

    assert _claim(stores, "live", now=NOW + LEASE_S - 1) == IN_PROGRESS
    assert _claim(stores, "live", now=NOW + LEASE_S + 1) is None
    assert _claim(stores, "third", now=NOW + LEASE_S + 2) == IN_PROGRESS


def the_same_id_of_another_thread_or_scope_is_another_extraction(make: MakeExtractionStores) -> None:
    stores = make()
    _claim(stores, "first")

    assert _claim(stores, "other-thread", thread="t-2") is None
    assert _claim(stores, "other-scope", scope=TEAM) is None
    assert _claim(stores, "other-id", extraction_id="ext-2") is None


def each_note_is_listed_in_its_claim_and_finish_marks_it_written(make: MakeExtractionStores) -> None:
    stores = make()
    _claim(stores, "mine")

    first, second = _write(stores, "mine"), _write(stores, "mine", "The user prefers quiet streets.")
    stores.claims.finish(command(), token="mine")

    assert (first.id, second.id) == (f"{DAY}.1", f"{DAY}.2")
    written = ExtractionMarker("written", (first.id, second.id))
    assert _claim(stores, "later", now=NOW + LEASE_S + 60) == written  # a written claim has no lease to run out
    stores.claims.release(command(), token="mine")  # kept: finished
    assert _claim(stores, "later", now=NOW + LEASE_S + 60) == written
    assert _claim(stores, "a-month-on", now=NOW + CLAIM_TTL_S + 1) is None


def a_note_on_a_claim_no_longer_its_own_writes_nothing(make: MakeExtractionStores) -> None:
    stores = make()
    _claim(stores, "slow")
    _claim(stores, "retry", now=NOW + LEASE_S + 1)  # the slow one's lease ran out: the retry holds the id

    with pytest.raises(Exception):  # noqa: B017 - the real store's ClientError, the fake's Cancelled
        _write(stores, "slow")

    assert stores.notes.get_many(PERSONAL, [(DAY, 1)]) == []
    assert stores.notes.usage.notes_on(PERSONAL, DAY) == 0  # its position given back
    assert _write(stores, "retry").position == 1
    assert _claim(stores, "third", now=NOW + LEASE_S + 2) == ExtractionMarker("in_progress", (f"{DAY}.1",))


def a_note_without_a_claim_writes_nothing(make: MakeExtractionStores) -> None:
    stores = make()

    with pytest.raises(Exception):  # noqa: B017 - the real store's ClientError, the fake's Cancelled
        _write(stores, "never-claimed")

    assert stores.notes.get_many(PERSONAL, [(DAY, 1)]) == []


def finish_is_refused_to_a_caller_that_no_longer_holds_the_claim(make: MakeExtractionStores) -> None:
    stores = make()
    _claim(stores, "slow")
    _claim(stores, "retry", now=NOW + LEASE_S + 1)

    with pytest.raises(Exception):  # noqa: B017 - the real store's ClientError, the fake's Cancelled
        stores.claims.finish(command(), token="slow")
    with pytest.raises(Exception):  # noqa: B017 - nor can an id nobody claimed be finished
        stores.claims.finish(command(extraction_id="ext-9"), token="slow")

    assert _claim(stores, "third", now=NOW + LEASE_S + 2) == IN_PROGRESS


def a_release_ends_the_lease_of_its_holder_only(make: MakeExtractionStores) -> None:
    stores = make()
    _claim(stores, "mine")

    stores.claims.release(command(), token="not-mine")
    assert _claim(stores, "retry") == IN_PROGRESS
    stores.claims.release(command(), token="mine")
    assert _claim(stores, "retry") is None
    stores.claims.release(command(extraction_id="ext-9"), token="mine")  # nothing to give back: nothing happens


def the_notes_are_read_back_in_the_order_asked_those_still_there(make: MakeExtractionStores) -> None:
    stores = make()
    _claim(stores, "mine")
    first, second = _write(stores, "mine"), _write(stores, "mine", "The user prefers quiet streets.")

    found = stores.notes.get_many(PERSONAL, [(DAY, 2), (DAY, 7), (DAY, 1)])

    assert found == [KeyedNote(PERSONAL.key, second), KeyedNote(PERSONAL.key, first)]
    assert stores.notes.get_many(TEAM, [(DAY, 1)]) == []


CONTRACTS = [
    a_free_id_is_claimed_once_and_a_second_claim_sees_the_first,
    a_claim_whose_lease_ran_out_is_taken_over,
    the_same_id_of_another_thread_or_scope_is_another_extraction,
    each_note_is_listed_in_its_claim_and_finish_marks_it_written,
    a_note_on_a_claim_no_longer_its_own_writes_nothing,
    a_note_without_a_claim_writes_nothing,
    finish_is_refused_to_a_caller_that_no_longer_holds_the_claim,
    a_release_ends_the_lease_of_its_holder_only,
    the_notes_are_read_back_in_the_order_asked_those_still_there,
]
