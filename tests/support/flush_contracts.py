"""The behaviours the flush's ports promise (``memory.flush.FlushClaims`` and ``FlushNotes``), written once and
checked against both the DynamoDB stores (tests/integration/test_flush_store_contracts.py, on moto) and the in-memory
fakes (tests/unit/test_fake_flush_store_contracts.py), so the flush's tests on the fakes mean what they say.

Each contract takes ``make``: a factory of the stores under test (``FlushStores``) on one fresh table. Time is the
``now_epoch`` each call is given, so a lease or a TTL runs out by asking later. Observations go through the ports
(a claim's marker, ``notes.get``) and the day's count (``notes.usage.notes_on``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

import pytest

from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.flush_store import CLAIM_TTL_S, LEASE_S, FlushMarker
from agent_memory.storage.keys import legacy_flush_sk
from tests.support.scopes import PERSONAL, TEAM, stored
from tests.support.seeds import Seed


class FlushStores(NamedTuple):
    """The stores under test, on one table: the claims, the notes (with their usage counter), and a seed."""

    claims: Any
    notes: Any
    seed: Seed


MakeFlushStores = Callable[[], FlushStores]
NOW = 1_796_000_000
AT = datetime(2026, 12, 3, 9, 30, tzinfo=UTC)
DAY = "2026-12-03"
ORIGIN = Origin("u-1", "t-1", "cmp-1")


def _claim(stores: FlushStores, token: str, *, now: int = NOW, scope: Scope = PERSONAL, thread: str = "t-1") -> Any:
    return stores.claims.claim(scope, thread, "cmp-1", token=token, now_epoch=now)


def _write(stores: FlushStores, token: str, text: str = "Summary.", *, scope: Scope = PERSONAL) -> Any:
    return stores.notes.append_completing_flush(scope, created=AT, text=stored(text), origin=ORIGIN, token=token)


def a_free_event_is_claimed_once_and_a_second_claim_sees_the_first(make: MakeFlushStores) -> None:
    stores = make()

    assert _claim(stores, "first") is None
    assert _claim(stores, "second") == FlushMarker("in_progress", None, "first")


def a_claim_whose_lease_ran_out_is_taken_over(make: MakeFlushStores) -> None:
    stores = make()
    _claim(stores, "dead")

    assert _claim(stores, "live", now=NOW + LEASE_S - 1) == FlushMarker("in_progress", None, "dead")
    assert _claim(stores, "live", now=NOW + LEASE_S + 1) is None
    assert _claim(stores, "third", now=NOW + LEASE_S + 2) == FlushMarker("in_progress", None, "live")


def the_same_compaction_id_of_another_thread_or_scope_is_another_event(make: MakeFlushStores) -> None:
    stores = make()
    _claim(stores, "first")

    assert _claim(stores, "other-thread", thread="t-2") is None
    assert _claim(stores, "other-scope", scope=TEAM) is None


def a_release_gives_the_claim_back_only_to_its_holder(make: MakeFlushStores) -> None:
    stores = make()
    _claim(stores, "mine")

    assert stores.claims.release(PERSONAL, "t-1", "cmp-1", token="not-mine") == FlushMarker("in_progress", None, "mine")
    assert stores.claims.release(PERSONAL, "t-1", "cmp-1", token="mine") is None
    assert _claim(stores, "retry") is None


def a_release_of_a_claim_that_is_gone_answers_an_empty_marker(make: MakeFlushStores) -> None:
    stores = make()

    assert stores.claims.release(PERSONAL, "t-1", "cmp-1", token="mine") == FlushMarker("in_progress", None, None)


def the_flush_note_marks_its_claim_written_in_its_transaction(make: MakeFlushStores) -> None:
    stores = make()
    _claim(stores, "mine")

    note = _write(stores, "mine")

    assert (note.id, note.text, note.source, note.origin) == (f"{DAY}.1", "Summary.", "flush", ORIGIN)
    assert stores.notes.get(PERSONAL, DAY, 1) == note
    assert stores.notes.get(PERSONAL, DAY, 1, consistent=True) == note
    written = FlushMarker("written", note.id, "mine")
    assert _claim(stores, "later", now=NOW + LEASE_S + 60) == written  # a written claim has no lease to run out
    assert stores.claims.release(PERSONAL, "t-1", "cmp-1", token="mine") == written  # kept: the note went in
    assert stores.notes.usage.notes_on(PERSONAL, DAY) == 1


def a_written_claim_is_gone_after_its_ttl(make: MakeFlushStores) -> None:
    stores = make()
    _claim(stores, "mine")
    _write(stores, "mine")

    assert _claim(stores, "a-month-on", now=NOW + CLAIM_TTL_S + 1) is None


def a_flush_note_on_a_claim_no_longer_its_own_writes_nothing(make: MakeFlushStores) -> None:
    stores = make()
    _claim(stores, "slow")
    _claim(stores, "retry", now=NOW + LEASE_S + 1)  # the slow one's lease ran out: the retry holds the event

    with pytest.raises(Exception):  # noqa: B017 - the real store's ClientError, the fake's Cancelled
        _write(stores, "slow")

    assert stores.notes.get(PERSONAL, DAY, 1) is None
    assert stores.notes.usage.notes_on(PERSONAL, DAY) == 0  # its position given back
    assert _write(stores, "retry").position == 1


def a_flush_note_without_a_claim_writes_nothing(make: MakeFlushStores) -> None:
    stores = make()

    with pytest.raises(Exception):  # noqa: B017 - the real store's ClientError, the fake's Cancelled
        _write(stores, "never-claimed")

    assert stores.notes.get(PERSONAL, DAY, 1) is None


def a_missing_note_reads_as_none(make: MakeFlushStores) -> None:
    assert make().notes.get(PERSONAL, DAY, 7) is None


def _legacy(stores: FlushStores, **attributes: Any) -> None:
    stores.seed(PERSONAL, legacy_flush_sk("cmp-1"), {"token": "old", "expires_at": NOW + 3600, **attributes})


def an_earlier_claim_is_read_while_it_lives(make: MakeFlushStores) -> None:
    stores = make()
    assert stores.claims.earlier_claim(PERSONAL, "cmp-1", now_epoch=NOW) is None
    _legacy(stores, status="in_progress", lease_until=NOW + 5)

    assert stores.claims.earlier_claim(PERSONAL, "cmp-1", now_epoch=NOW) == FlushMarker("in_progress", None, "old")
    assert stores.claims.earlier_claim(PERSONAL, "cmp-1", now_epoch=NOW + 6) is None  # its lease ran out
    assert stores.claims.earlier_claim(TEAM, "cmp-1", now_epoch=NOW) is None


def an_earlier_written_claim_lives_until_its_ttl(make: MakeFlushStores) -> None:
    stores = make()
    _legacy(stores, status="written", note_id=f"{DAY}.4")

    assert stores.claims.earlier_claim(PERSONAL, "cmp-1", now_epoch=NOW + 60) == FlushMarker(
        "written", f"{DAY}.4", "old"
    )
    assert stores.claims.earlier_claim(PERSONAL, "cmp-1", now_epoch=NOW + 3601) is None


CONTRACTS = [
    a_free_event_is_claimed_once_and_a_second_claim_sees_the_first,
    a_claim_whose_lease_ran_out_is_taken_over,
    the_same_compaction_id_of_another_thread_or_scope_is_another_event,
    a_release_gives_the_claim_back_only_to_its_holder,
    a_release_of_a_claim_that_is_gone_answers_an_empty_marker,
    the_flush_note_marks_its_claim_written_in_its_transaction,
    a_written_claim_is_gone_after_its_ttl,
    a_flush_note_on_a_claim_no_longer_its_own_writes_nothing,
    a_flush_note_without_a_claim_writes_nothing,
    a_missing_note_reads_as_none,
    an_earlier_claim_is_read_while_it_lives,
    an_earlier_written_claim_lives_until_its_ttl,
]
