"""Named in-memory fakes of what people's control erases with (``people.ports``), on the shared world of
``tests/support/fake_stores.py``: the scope's partition and its erase record (``FakeScopeItems``, as
``storage.scope_items.ScopeItems``) and what deleted notes leave behind (``FakeStaleRecords``, as
``storage.stale_records.StaleRecords``).

The erase's logic rests on the table's guarantees, so they are kept: a page is counted on the erase record, under its
own id and on condition that no other page is held, *before* its items are deleted, and let go after; a call that
finds a held page (a crash between the two) deletes it without counting it again; a count sent again after its
answer was lost meets its own page id. Every call is named for the world's faults (``"scope_items.erase_page"``...),
so a test stops an erase at any step and calls it again. The erase mark moves on the night's fake due markers
(``tests/support/fake_night.FakeDueMarkers.erasing``), as ``ScopeItems`` moves it with ``DueMarkers``; a write is
sent again after a lost answer as botocore sends it (``fake_night.sent``).

Items cross the port as the real store returns them, DynamoDB items (``sk``, ``text``, a note's attributes, a
version's), built from the world's items with the real stores' own item builders (``note_items.note_item``), so
the export parses them with the real parsers.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from agent_memory.basics.errors import InvalidInput, StorageUnavailable
from agent_memory.domain.document import Author, Document, Reason
from agent_memory.domain.notes import Note, note_id
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import InjectionEntryAnswer, InjectionsAnswer
from agent_memory.storage.document_store import version_from_item
from agent_memory.storage.keys import (
    DOC_HEAD,
    ERASE_PREFIX,
    EXTRACTION_PREFIX,
    INJECTION_PREFIX,
    NOTE_PREFIX,
    VERSION_PREFIX,
    parse_note_sk,
    version_sk,
)
from agent_memory.storage.note_items import SUPERSEDED_BY, SUPERSEDES, note_from_item, note_item
from agent_memory.storage.scope_items import PartitionItem
from agent_memory.storage.stale_records import FLUSH_CLAIM, IDEMPOTENT_REMEMBER, Stale, answered_note, origin_user
from tests.support.fake_night import FakeDueMarkers, sent
from tests.support.fake_stores import Cancelled, FakeWorld, Item, Write

_BATCH = 25  # the deletes of one BatchWriteItem, as ``ScopeItems.delete`` sends them
_KEYS_PAGE = 1000  # ``ScopeItems.keys``'s Limit
_END = "\uffff"


def table_item(scope: Scope, sk: str, item: Item) -> dict[str, Any]:
    """A world item as DynamoDB holds it: a note by ``note_items.note_item``, a version (or the head) with the
    attributes ``document_store`` writes, any other with its own string and number attributes."""
    if sk.startswith(NOTE_PREFIX) and "note" in item:
        typed = note_item(scope, item["note"])
        for name in (SUPERSEDES, SUPERSEDED_BY):
            if item.get(name):
                typed[name] = {"SS": sorted(item[name])}
        return typed
    if (sk == DOC_HEAD or sk.startswith(VERSION_PREFIX)) and "document" in item:
        document, by = item["document"], item["by"]
        ids = {"by_user_id": by.user_id, "by_thread_id": by.thread_id, "by_run_id": by.run_id}
        authored = {name: {"S": value} for name, value in ids.items() if value}
        return {
            "pk": {"S": scope.key},
            "sk": {"S": sk},
            "content": {"S": document.content},
            "version": {"N": str(document.version)},
            "updated_at": {"S": document.updated_at},
            "reason": {"S": item["reason"]},
            **authored,
        }
    plain: dict[str, Any] = {"pk": {"S": scope.key}, "sk": {"S": sk}}
    for name, value in item.items():
        if isinstance(value, str):
            plain[name] = {"S": value}
        elif isinstance(value, int) and not isinstance(value, bool):
            plain[name] = {"N": str(value)}
        elif isinstance(value, list) and all(isinstance(one, str) for one in value):
            plain[name] = {"L": [{"S": one} for one in value]}
    return plain


def _partition_item(scope: Scope, item: Item) -> PartitionItem:
    """What ``ScopeItems.keys`` reads of an item: its sort key, its text's length and the notes it supersedes."""
    return PartitionItem.of(table_item(scope, item["sk"], item))


class FakeScopeItems:
    """A scope's items in key order and its resumable erase (``storage.scope_items.ScopeItems``)."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def page(
        self, scope: Scope, *, low: str, high: str, after: str | None, limit: int, attributes: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        def rows() -> tuple[list[dict[str, Any]], str | None]:
            found = [item for item in self.world.between(scope.key, low, high) if after is None or item["sk"] > after]
            kept = [table_item(scope, item["sk"], item) for item in found[:limit]]
            # DynamoDB answers a LastEvaluatedKey whenever the Limit stopped the read, even at the range's end
            return kept, (kept[-1]["sk"]["S"] if len(found) >= limit and kept else None)

        answer: tuple[list[dict[str, Any]], str | None] = self.world.read("scope_items.page", rows)
        return answer

    def versions_page(
        self, scope: Scope, *, after: str | None, limit: int
    ) -> tuple[list[tuple[Document, Reason, Author]], str | None]:
        rows, last = self.page(scope, low=version_sk(1), high=version_sk(10**10 - 1), after=after, limit=limit)
        return [version_from_item(row) for row in rows], last

    def notes_page(self, scope: Scope, *, after: str | None, limit: int) -> tuple[list[Note], str | None]:
        rows, last = self.page(scope, low=NOTE_PREFIX, high=NOTE_PREFIX + "~", after=after, limit=limit)
        return [note_from_item(row) for row in rows], last

    def keys(self, scope: Scope, *, prefix: str = "", author: str | None = None) -> Iterator[list[PartitionItem]]:
        high = prefix + _END
        if author is not None:  # one pass, page after page, the filter applied to each page read
            after = ""
            while True:
                read = self.world.read(
                    "scope_items.keys",
                    lambda after=after: [i for i in self.world.between(scope.key, prefix, high) if i["sk"] > after][
                        :_KEYS_PAGE
                    ],
                )
                mine = [
                    _partition_item(scope, item)
                    for item in read
                    if "note" in item and item["note"].origin.user_id == author
                ]
                if mine:
                    yield mine
                if len(read) < _KEYS_PAGE:
                    return
                after = read[-1]["sk"]
        while True:  # read from the start again: what the last page deleted is gone, what was written since is found
            found = self.world.read(
                "scope_items.keys",
                lambda: [
                    i for i in self.world.between(scope.key, prefix, high) if not i["sk"].startswith(ERASE_PREFIX)
                ][:_KEYS_PAGE],
            )
            if not found:
                return
            yield [_partition_item(scope, item) for item in found]

    def unlink(self, scope: Scope, page: list[PartitionItem]) -> None:
        for row in page:
            gone = note_id(*parse_note_sk(row.sk))
            for old in row.supersedes:
                day, position = old.split(".")
                key = (scope.key, f"{NOTE_PREFIX}{day}#{int(position):09d}")
                sent(
                    self.world, "scope_items.unlink", [Write(key, _without(SUPERSEDED_BY, gone), _present)]
                )  # refused: gone

    def delete(self, scope: Scope, sort_keys: list[str]) -> None:
        for start in range(0, len(sort_keys), _BATCH):
            batch = sort_keys[start : start + _BATCH]
            sent(self.world, "scope_items.delete", [Write((scope.key, sk), lambda _: None) for sk in batch])

    def begin_erase(self, scope: Scope, record: str, started_at: str) -> dict[str, int]:
        FakeDueMarkers(self.world).erasing(scope, running=True)  # before the first delete
        key = _record_key(scope, record)
        sent(
            self.world, "scope_items.begin_erase", [Write(key, lambda item: {"started_at": started_at, **(item or {})})]
        )
        item = self.world.item(key) or {}
        if "page_id" in item:
            self._finish_page(scope, record, item["page_id"], item["page"])
        return {kind: item[kind] for kind in ("notes", "versions", "other") if kind in item}

    def erase_page(self, scope: Scope, record: str, sort_keys: list[str], counts: dict[str, int]) -> str:
        page_id = uuid.uuid4().hex
        changed = {kind: count for kind, count in counts.items() if count}

        def counted(item: Item | None) -> Item:
            item = dict(item or {})
            for kind, count in changed.items():
                item[kind] = item.get(kind, 0) + count
            return {**item, "page": list(sort_keys), "page_id": page_id}

        def free(item: Item | None) -> bool:
            return item is not None and "started_at" in item and "page_id" not in item

        key = _record_key(scope, record)
        counted_now = sent(self.world, "scope_items.erase_page", [Write(key, counted, free)])
        # refused: its own page (a resend after a lost answer, counted once), or another call's
        if not counted_now and (self.world.item(key) or {}).get("page_id") != page_id:
            raise StorageUnavailable("another erase of this memory is running; call the erase again")
        self._finish_page(scope, record, page_id, sort_keys)
        return page_id

    def _finish_page(self, scope: Scope, record: str, page_id: str, sort_keys: list[str]) -> None:
        self.delete(scope, list(sort_keys))

        def let_go(item: Item | None) -> Item:
            return {name: value for name, value in (item or {}).items() if name not in ("page", "page_id")}

        held = Write(_record_key(scope, record), let_go, lambda item: (item or {}).get("page_id") == page_id)
        sent(self.world, "scope_items.release", [held])  # refused: let go already (a resend after a lost answer)

    def end_erase(self, scope: Scope, record: str) -> None:
        FakeDueMarkers(self.world).erasing(scope, running=False)  # after the last delete
        sent(self.world, "scope_items.end_erase", [Write(_record_key(scope, record), lambda _: None)])

    def injections(
        self, scope: Scope, *, thread_id: str | None, limit: int, cursor: str | None, now_epoch: int
    ) -> InjectionsAnswer:
        """Newest first, ``limit`` of them, expired ones left out (``injection_records.list_injections``; its bound
        on the pages read per call is not modelled: a fake's histories are short)."""
        after = _cursor_sk(cursor) if cursor is not None else None

        def rows() -> list[Item]:
            found = self.world.between(scope.key, INJECTION_PREFIX, INJECTION_PREFIX + _END, newest_first=True)
            return [
                item
                for item in found
                if (after is None or item["sk"] < after)
                and item.get("expires_at", 0) > now_epoch
                and (thread_id is None or item.get("thread_id") == thread_id)
            ]

        found = self.world.read("scope_items.injections", rows)
        shown = found[:limit]
        more = len(shown) == limit
        return InjectionsAnswer(
            injections=[
                InjectionEntryAnswer(
                    at=item["at"],
                    thread_id=item["thread_id"],
                    document_version=item["document_version"],
                    note_ids=list(item["note_ids"]),
                )
                for item in shown
            ],
            next_cursor=base64.urlsafe_b64encode(shown[-1]["sk"].encode()).decode() if more and shown else None,
        )


def _cursor_sk(cursor: str) -> str:
    try:
        sk = base64.urlsafe_b64decode(cursor.encode()).decode()
    except ValueError:
        sk = ""
    if not sk.startswith(INJECTION_PREFIX):
        raise InvalidInput("`cursor` must be the `next_cursor` of a previous answer")
    return sk


def _record_key(scope: Scope, record: str) -> tuple[str, str]:
    return (scope.key, ERASE_PREFIX + record)


def _present(item: Item | None) -> bool:
    return item is not None


def _without(name: str, gone: str) -> Callable[[Item | None], Item]:
    """A set attribute less ``gone``; the attribute leaves with its last member, as DynamoDB's ``DELETE`` does."""

    def change(item: Item | None) -> Item:
        kept = dict(item or {})
        left = set(kept.get(name, ())) - {gone}
        if left:
            kept[name] = left
        else:
            kept.pop(name, None)
        return kept

    return change


class FakeStaleRecords:
    """What deleted notes left behind (``storage.stale_records.StaleRecords``): a ``remember``'s idempotency record
    (its ``answer``, JSON, holds the note), a flush claim (``note_id``), an extraction claim (``note_ids``) and the
    turns' injection records (``user_id``, ``note_ids``)."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def trim_and_list(self, scope: Scope, note_ids: set[str], *, author: str | None = None) -> Stale:
        if not note_ids and author is None:
            return Stale([], 0)
        gone: list[str] = []
        for item in self._items(scope, IDEMPOTENT_REMEMBER):
            note = answered_note({"answer": {"S": item.get("answer", "null")}})
            if note and (note.get("id") in note_ids or (author is not None and origin_user(note) == author)):
                gone.append(item["sk"])
        gone += [item["sk"] for item in self._items(scope, FLUSH_CLAIM) if item.get("note_id") in note_ids]
        trimmed = 0
        for item in self._items(scope, EXTRACTION_PREFIX):
            named = list(item.get("note_ids", []))
            if note_ids.intersection(named):
                kept = [one for one in named if one not in note_ids]
                if kept:
                    self._keep_only(scope, item["sk"], named, kept)
                else:
                    gone.append(item["sk"])
        for item in self._items(scope, INJECTION_PREFIX):
            if author is not None and item.get("user_id") == author:
                gone.append(item["sk"])
                continue
            shown = list(item.get("note_ids", []))
            if note_ids.intersection(shown):
                trimmed += self._keep_only(scope, item["sk"], shown, [one for one in shown if one not in note_ids])
        return Stale(gone, trimmed)

    def void(self, scope: Scope, note_ids: set[str]) -> None:
        """Void what the deleted ``note_ids`` left (``StaleRecords.void``): each record gone, one delete each."""
        for sk in self.trim_and_list(scope, note_ids).gone:
            self.world.transact("stale.void", [Write((scope.key, sk), lambda _: None)])

    def _items(self, scope: Scope, prefix: str) -> list[Item]:
        found: list[Item] = self.world.read("stale.items", lambda: self.world.between(scope.key, prefix, prefix + _END))
        return found

    def _keep_only(self, scope: Scope, sk: str, read: list[str], note_ids: list[str]) -> int:
        """1 when the record now names only ``note_ids``; 0 when it is gone or its list changed since it was read."""
        still = Write((scope.key, sk), lambda item: {**(item or {}), "note_ids": list(note_ids)}, _sized(len(read)))
        try:
            self.world.transact("stale.keep_only", [still])
        except Cancelled:
            return 0
        return 1


def _sized(count: int) -> Callable[[Item | None], bool]:
    return lambda item: item is not None and len(item.get("note_ids", [])) == count
