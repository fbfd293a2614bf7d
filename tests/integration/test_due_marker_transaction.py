"""The consolidation's due marker is written in the note's own transaction (docs/consolidation.md): a writer
that dies right after its note leaves the scope due, a transaction sent twice (its answer lost) counts the
note once, and a note older than the marker moves the marker back in the same transaction."""

from __future__ import annotations

from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.due_markers import DueMarkers
from agent_memory.storage.keys import DUE_SK
from agent_memory.storage.note_store import NoteStore
from tests.support.faults import FaultyClient, provide_clients
from tests.support.scopes import note_texts, private, stored

TABLE = "MemoryTable"
CUTOFF = "2026-12-31T00:00:00.000Z"


class ProcessDied(BaseException):
    """The Lambda sandbox killed between two requests (a BaseException, so no ``except Exception`` sees it)."""


class DiesAfterTheNote:
    """A DynamoDB client whose process dies at the first request after a note's transaction succeeded."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.noted = False

    def transact_write_items(self, **request: Any) -> Any:
        if self.noted:
            raise ProcessDied
        answer = self._client.transact_write_items(**request)
        self.noted = any(
            item.get("Put", {}).get("Item", {}).get("sk", {}).get("S", "").startswith("note#")
            for item in request["TransactItems"]
        )
        return answer

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def called(**request: Any) -> Any:
            if self.noted:
                raise ProcessDied
            return method(**request)

        return called


class AnswerLostOnce:
    """A DynamoDB client whose first transaction is applied, its answer lost, and sent again (botocore's retry)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._lost = False

    def transact_write_items(self, **request: Any) -> Any:
        if not self._lost:
            self._lost = True
            self._client.transact_write_items(**request)
        return self._client.transact_write_items(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _append(client: Any, scope: Scope, created: datetime, text: str) -> None:
    NoteStore(client, TABLE).append(
        scope, created=created, text=stored(text), source="remember", origin=Origin("u-1", "t-1")
    )


def _marker(client: Any, scope: Scope) -> dict[str, Any]:
    item: dict[str, Any] = client.get_item(TableName=TABLE, Key={"pk": {"S": scope.key}, "sk": {"S": DUE_SK}}).get(
        "Item", {}
    )
    return item


def test_a_writer_that_dies_right_after_its_note_leaves_the_scope_due(aws):
    scope = Scope("personal", "u-crash")
    dying = DiesAfterTheNote(aws)

    with suppress(ProcessDied):  # before: the note was stored and the marker's update never sent
        _append(dying, scope, datetime(2026, 11, 20, 9, 0, tzinfo=UTC), "stored, then the sandbox died")

    assert dying.noted
    assert note_texts(aws, scope.key) == ["stored, then the sandbox died"]
    due = [(d.scope_key, d.oldest, d.notes) for d in DueMarkers(aws, TABLE).due_scopes(CUTOFF)]
    assert due == [(scope.key, "2026-11-20T09:00:00.000Z", 1)]


def test_a_transaction_sent_again_after_its_answer_was_lost_counts_the_note_once(aws):
    scope = Scope("personal", "u-lost")

    _append(AnswerLostOnce(aws), scope, datetime(2026, 11, 20, 9, 0, tzinfo=UTC), "written once")

    marker = _marker(aws, scope)
    assert note_texts(aws, scope.key) == ["written once"]
    assert (marker["notes"]["N"], marker["writes"]["N"]) == ("1", "1")


def test_a_note_older_than_the_marker_moves_it_back_in_its_own_transaction(aws):
    scope = Scope("team", "w-late")
    _append(aws, scope, datetime(2026, 11, 22, 9, 0, tzinfo=UTC), "newer")
    dying = DiesAfterTheNote(aws)

    with suppress(ProcessDied):  # a late clock: the marker's condition refuses the first try, the second moves it
        _append(dying, scope, datetime(2026, 11, 20, 8, 0, tzinfo=UTC), "older, from a late clock")

    marker = _marker(aws, scope)
    assert (marker["oldest"]["S"], marker["floor"]["S"]) == ("2026-11-20T08:00:00.000Z", "2026-11-20")
    assert (marker["notes"]["N"], marker["writes"]["N"]) == ("2", "2")
    assert [d.oldest for d in DueMarkers(aws, TABLE).due_scopes(CUTOFF)] == ["2026-11-20T08:00:00.000Z"]


def test_a_loaded_note_makes_its_scope_due_with_it_and_once(aws):
    from agent_memory.domain.notes import Note

    scope = Scope("personal", "u-load")
    store = NoteStore(aws, TABLE)
    _append(aws, scope, datetime(2026, 11, 25, 9, 0, tzinfo=UTC), "today's")
    old = Note("2026-11-02", 3, stored("imported"), "2026-11-02T07:00:00.000Z", "remember", Origin("u-1", "t-1"))

    store.load(scope, old)
    store.load(scope, old)  # a resumed import

    marker = _marker(aws, scope)
    assert (marker["oldest"]["S"], marker["floor"]["S"], marker["notes"]["N"]) == (
        "2026-11-02T07:00:00.000Z",
        "2026-11-02",
        "2",
    )


def test_a_failed_note_transaction_writes_neither_the_note_nor_the_marker(call, aws):
    provide_clients(lambda client: FaultyClient(client, {"transact_write_items": "ThrottlingException"}))
    answer = call("remember", {"context": private(user="u-none"), "arguments": {"text": "lost"}})

    assert answer.status == 503
    assert note_texts(aws, "user#u-none") == []
    assert _marker(aws, Scope("personal", "u-none")) == {}
