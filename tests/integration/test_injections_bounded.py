"""Bounded work per ``/injections`` call (docs/people.md "What the agent was shown"): a thread with no
record in a long history is answered after at most four Query pages, with a cursor to read on; following
the cursors reads the history once, and the thread's records are found wherever they are."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.storage.injection_records import READ_PAGE_ITEMS, READ_PAGES, Injection
from tests.support.faults import ScriptedClient, provide_clients

PERSONAL = Scope("personal", "u-1")
HISTORY = 5_000


def fill(aws) -> None:
    recorder = bootstrap.services().injection_recorder
    start = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
    for number in range(HISTORY):
        thread = "t-rare" if number in (3, 4_990) else "t-busy"
        assert recorder.record(Injection(PERSONAL, start - timedelta(seconds=number), thread, 1, ["2026-12-03.1"]))


def counting() -> list[int]:
    """The ``Limit`` of each Query the graph's clients make from now on."""
    calls: list[int] = []

    def query(real, **request):
        calls.append(request.get("Limit", 0))
        return real(**request)

    provide_clients(lambda client: ScriptedClient(client, query=query))
    return calls


@pytest.mark.long
def test_a_thread_with_no_record_is_answered_after_a_bounded_read(aws):
    fill(aws)
    calls = counting()

    answer = bootstrap.services().people.injections(PERSONAL, thread_id="t-none", limit=20, cursor=None)

    assert answer.injections == []
    assert answer.next_cursor is not None
    assert len(calls) == READ_PAGES and set(calls) == {READ_PAGE_ITEMS}


def test_following_the_cursors_reads_the_history_once_and_finds_every_record(aws):
    fill(aws)
    calls = counting()
    found, cursor, answers = [], None, 0
    while True:
        answer = bootstrap.services().people.injections(PERSONAL, thread_id="t-rare", limit=20, cursor=cursor)
        answers += 1
        found += [entry.at for entry in answer.injections]
        cursor = answer.next_cursor
        if cursor is None:
            break

    assert len(found) == 2
    assert len(calls) <= HISTORY // READ_PAGE_ITEMS + 1
    assert answers == 3  # 2,000 records a call
