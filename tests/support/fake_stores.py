"""Named in-memory fakes of the stores the use cases depend on (their ports, e.g. ``memory.ports``): one shared
world of items, and stores that read and write it as the DynamoDB stores read and write the table.

Why not a stub: a use case's logic rests on what the table guarantees, so the fakes keep those guarantees and
nothing is answered from a script.

- **One world per test** (``FakeWorld``): every item of every scope, keyed as the table keys it (``storage.keys``:
  ``(scope.key, "doc")``, ``(scope.key, "note#<day>#<pos>")``, ``(scope.key, "usage")``...), each a plain dict of
  attributes. All fake stores of a test share it, so what one writes the others read.
- **Transactions are all or nothing** (``FakeWorld.transact``): a list of ``Write``s, each with its condition on the
  item as it is; every condition is checked first, and one that fails cancels the whole list (``Cancelled``, with
  the failing write's index and the item as it was: DynamoDB's ``CancellationReasons`` and ``ALL_OLD``). A note's
  append with its day counter, usage counter and due marker, or a version's save with its head, counter move and
  pruned version, land together or not at all, as in DynamoDB.
- **A request token** (``transact(..., token=...)``): a transaction sent again with the token of one that applied
  answers as done and changes nothing (DynamoDB's ``ClientRequestToken``).
- **Faults per call** (``world.faults``, named ``"<store>.<method>"``, e.g. ``"documents.save"``): ``fail`` raises
  ``StorageUnavailable`` before the call (nothing applied); ``lose_answers`` lets the call apply and then loses its
  answer (``AnswerLost``, a ``StorageUnavailable``), so a store's or a use case's settling of a lost answer runs;
  ``before`` runs a hook first (another writer landing between a read and a write). Each is used up as it fires.
- **Lost answers are settled as the real store settles them**: a store resends a transaction whose answer was lost
  (``SENDS`` times, as botocore does) with the same token; a resend with another token meets its own write and
  tells it by its ``write_id``.

How to add a store (flush records, consolidation's pending marks, due markers and run records, people's erase):
1. Write a class ``Fake<Thing>Store`` taking the ``FakeWorld`` (and what the real one is configured with, e.g. a
   ``Quota``); keep its items under the keys ``storage.keys`` gives the real store, so the stores that share an item
   (the due marker, the usage counter, the day item) see each other's writes.
2. Each method: a read is ``world.read("<store>.<method>", lambda: ...)``; a write builds ``Write``s (condition and
   change as pure functions of the item) and sends them with ``world.send("<store>.<method>", writes, token=...)``
   (resent while its answer is lost, as botocore resends; ``world.transact`` sends once), mapping
   ``Cancelled.index`` to the refusal the real store raises for that item, and settling an unknown outcome
   (``StorageUnavailable``) as the real store does.
3. Items another store also writes get their ``Write`` from one function here (``usage_move``,
   ``due_marker_move``), never a second copy; notes are written through ``FakeNoteStore`` (the day's counter).
4. Add its behaviours to ``tests/support/store_contracts.py`` and run them on the real store (tests/integration,
   moto) and on the fake (tests/unit), so the fake cannot drift.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import EllipsisType
from typing import Any

from agent_memory.basics.clock import iso
from agent_memory.basics.errors import StorageUnavailable, VersionConflict
from agent_memory.domain.document import EMPTY_DOCUMENT, Author, Document, Reason
from agent_memory.domain.fold import Fold
from agent_memory.domain.notes import Note, Origin, by_day
from agent_memory.domain.provenance import LineNotes, carried, follow, in_note_order, of_lines
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import StoredText, checked
from agent_memory.memory.service import MemoryService
from agent_memory.storage.document_store import FoldedNoteGone, VersionMeta
from agent_memory.storage.keys import (
    DOC_HEAD,
    DUE_SK,
    NOTE_PREFIX,
    PENDING_SK,
    USAGE_SK,
    day_sk,
    note_sk,
    notes_of_days,
    version_sk,
)
from agent_memory.storage.note_items import SUPERSEDED_BY, KeyedNote, NoteText
from agent_memory.storage.usage_store import CharsChange, Quota, chars_quota_error, member_counter, notes_quota_error
from tests.support.models import ScriptedChatModels

Item = dict[str, Any]
Key = tuple[str, str]  # (pk, sk), as storage.keys builds them

# How often a request whose answer was lost is sent (botocore's standard retry mode: three attempts).
SENDS = 3
# How many positions a note tries when the day counter's position is taken (``NoteStore``'s own bound).
POSITION_ATTEMPTS = 5
# How often a note whose outcome is unknown is settled before it is answered unknown (``lost_note_writes``).
SETTLE_ATTEMPTS = 3


class AnswerLost(StorageUnavailable, status=503, code="storage_unavailable"):
    """The request applied, but its answer never came back (a timeout after the write)."""


class Cancelled(Exception):
    """A transaction refused because the condition of its write number ``index`` failed; nothing was applied.
    ``item``: that write's item as it was (None: absent), as DynamoDB returns it with ``ALL_OLD``."""

    def __init__(self, index: int, item: Item | None) -> None:
        super().__init__(f"condition of write {index} failed")
        self.index, self.item = index, item


def _always(item: Item | None) -> bool:
    return True


@dataclass(frozen=True)
class Write:
    """One item of a transaction: ``change`` makes the item after from the item before (None: absent; answering
    None deletes it), on ``condition`` of the item before."""

    key: Key
    change: Callable[[Item | None], Item | None]
    condition: Callable[[Item | None], bool] = _always

    @staticmethod
    def check(key: Key, condition: Callable[[Item | None], bool]) -> Write:
        """A ``ConditionCheck``: a condition on an item that the transaction leaves as it is."""
        return Write(key, lambda item: item, condition)


@dataclass
class Faults:
    """What goes wrong, call by call: each fault fires on the next calls of its name and is used up."""

    _fail: dict[str, int] = field(default_factory=dict)
    _lose: dict[str, int] = field(default_factory=dict)
    _before: dict[str, list[Callable[[], None]]] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)  # every call, in order
    _hooked: bool = False

    def fail(self, call: str, times: int = 1) -> None:
        """The next ``times`` calls of ``call`` raise ``StorageUnavailable`` before anything applies."""
        self._fail[call] = self._fail.get(call, 0) + times

    def lose_answers(self, call: str, times: int = 1) -> None:
        """The next ``times`` calls of ``call`` apply, then raise ``AnswerLost``."""
        self._lose[call] = self._lose.get(call, 0) + times

    def before(self, call: str, hook: Callable[[], None], times: int = 1) -> None:
        """``hook`` runs just before each of the next ``times`` calls of ``call`` (e.g. another writer's save
        landing first); hooks given for one call run one a call, in the order given, and the calls a hook makes
        itself fire none."""
        self._before.setdefault(call, []).extend([hook] * times)

    def entering(self, call: str) -> None:
        self.seen.append(call)
        if (hooks := self._before.get(call)) and not self._hooked:  # a hook's own calls are not the test's
            self._hooked = True
            try:
                hooks.pop(0)()
            finally:
                self._hooked = False
        if self._use(self._fail, call):
            raise StorageUnavailable(f"{call}: memory storage is unavailable (a fault of the test)")

    def answering(self, call: str) -> None:
        if self._use(self._lose, call):
            raise AnswerLost(f"{call}: the answer was lost (a fault of the test)")

    @staticmethod
    def _use(counts: dict[str, int], call: str) -> bool:
        if counts.get(call, 0) <= 0:
            return False
        counts[call] -= 1
        return True


class FakeWorld:
    """Every item of a test's table, shared by its fake stores. Items are copied in and out: a store never holds
    a reference into the world, as a DynamoDB client never does."""

    def __init__(self) -> None:
        self._partitions: dict[str, dict[str, Item]] = {}
        self._tokens: set[str] = set()
        self._lock = threading.RLock()  # the world is one table: concurrent stores see each transaction whole
        self.faults = Faults()

    def item(self, key: Key) -> Item | None:
        """The item at ``key`` as it is now (a copy), outside any fault: what a test inspects."""
        with self._lock:
            found = self._partitions.get(key[0], {}).get(key[1])
            return dict(found) if found is not None else None

    def between(self, pk: str, low: str, high: str, *, newest_first: bool = False) -> list[Item]:
        """The items of partition ``pk`` whose sort key is in ``low``..``high`` (inclusive), in sort-key order
        (descending with ``newest_first``), each with its ``sk``."""
        with self._lock:
            partition = self._partitions.get(pk, {})
            keys = sorted((sk for sk in partition if low <= sk <= high), reverse=newest_first)
            return [{**partition[sk], "sk": sk} for sk in keys]

    def across(self, sk: str) -> list[Item]:
        """Every partition's item at sort key ``sk`` (copies, each with its ``pk``), as a sparse index over one kind
        of item reads them (the due markers, the pending-marks records)."""
        with self._lock:
            return [{**items[sk], "pk": pk} for pk, items in self._partitions.items() if sk in items]

    def read(self, call: str, answer: Callable[[], Any]) -> Any:
        """A read named ``call``: its faults, then ``answer()`` under the world's lock."""
        self.faults.entering(call)
        with self._lock:
            return answer()

    def transact(self, call: str, writes: Iterable[Write], *, token: str | None = None) -> None:
        """Apply ``writes`` all or nothing (``Cancelled`` names the first failing condition). With ``token``, a
        transaction that applied under it before answers as done and changes nothing."""
        writes = list(writes)
        self.faults.entering(call)
        with self._lock:
            if token is None or token not in self._tokens:
                for index, write in enumerate(writes):
                    before = self.item(write.key)
                    if not write.condition(before):
                        raise Cancelled(index, before)
                for write in writes:
                    after = write.change(self.item(write.key))
                    partition = self._partitions.setdefault(write.key[0], {})
                    if after is None:
                        partition.pop(write.key[1], None)
                    else:
                        partition[write.key[1]] = after
                if token is not None:
                    self._tokens.add(token)
        self.faults.answering(call)

    def send(self, call: str, writes: list[Write], *, token: str) -> None:
        """``transact``, sent again (``SENDS`` times in all) while its answer is lost, as botocore sends a request
        again after a timeout; the token makes a resend of a transaction that applied answer as done."""
        for attempt in range(SENDS):
            try:
                self.transact(call, writes, token=token)
                return
            except AnswerLost:
                if attempt == SENDS - 1:
                    raise


def token_of(*parts: object) -> str:
    """A request token derived from what the request says (``storage.client.request_token``'s rule: the same
    write sent again has the same token, another write another one)."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:36]


def claim_free(now_epoch: int) -> Callable[[Item | None], bool]:
    """``storage.client.claim_record``'s condition: the key is free, its holder's lease ran out, or the record
    outlived its TTL (``live_record`` reads the negation)."""

    def free(item: Item | None) -> bool:
        if item is None or item.get("expires_at", now_epoch) < now_epoch:
            return True
        return item.get("status") == "in_progress" and item.get("lease_until", 0) < now_epoch

    return free


def held_by(token: str) -> Callable[[Item | None], bool]:
    """The claim is still ``token``'s and not written: the condition of a claim's release and of its completion."""
    return lambda item: item is not None and item.get("status") == "in_progress" and item.get("token") == token


def claim_record(
    world: FakeWorld, call: str, key: Key, attributes: Item, *, now_epoch: int, lease_s: int, keep_s: int
) -> Item | None:
    """``storage.client.claim_record``: ``attributes`` put ``in_progress`` for ``lease_s``, kept ``keep_s``, on
    condition the key is free (``claim_free``). None: the claim is this caller's (a resend after a lost answer meets
    this very claim, by its ``claim_id``); else the item that holds the key."""
    claim_id = uuid.uuid4().hex
    record = {
        **attributes,
        "claim_id": claim_id,
        "status": "in_progress",
        "lease_until": now_epoch + lease_s,
        "expires_at": now_epoch + keep_s,
    }
    try:
        world.send(call, [Write(key, lambda _: dict(record), claim_free(now_epoch))], token=claim_id)
    except Cancelled as refused:
        return refused.item or {}
    return None


def usage_move(scope: Scope, delta: int, quota: Quota | None, *, enforce: bool = True) -> Write:
    """The characters counter moved by ``delta``: on condition of the quota when it grows and ``enforce``
    (``usage_store.chars_change_item``'s rule). The one counter move every fake store puts in its transactions."""
    limited = quota is not None and delta > 0 and enforce
    if limited and quota is not None and delta > quota.chars:
        raise chars_quota_error(quota, delta)

    def fits(item: Item | None) -> bool:
        return not limited or quota is None or item is None or item.get("chars", 0) <= quota.chars - delta

    def moved(item: Item | None) -> Item:
        item = item or {}
        return {**item, "chars": item.get("chars", 0) + delta}

    return Write((scope.key, USAGE_SK), moved, fits)


def due_marker_move(scope: Scope, *, created_at: str, day: str) -> Write:
    """The scope's due marker moved by one unconsolidated note (``storage.note_append.marker_item``): its oldest
    note and day kept as the earliest seen, its writes and notes counted."""

    def moved(item: Item | None) -> Item:
        item = item or {}
        return {
            **item,
            "oldest": min(item.get("oldest", created_at), created_at),
            "floor": min(item.get("floor", day), day),
            "writes": item.get("writes", 0) + 1,
            "notes": item.get("notes", 0) + 1,
        }

    return Write((scope.key, DUE_SK), moved)


def erase_mark_moved(scope: Scope) -> Write:
    """A deletion's move of the scope's erase mark (``due_markers.erase_mark_move``), where the scope has a due marker
    (a scope without one has no fold to refuse)."""
    return Write((scope.key, DUE_SK), lambda item: None if item is None else {**item, "fence": uuid.uuid4().hex})


class FakeUsageStore:
    """The characters counter (``storage.usage_store.UsageStore``) and the day counts, on the shared world."""

    def __init__(self, world: FakeWorld, quota: Quota | None = None) -> None:
        self.world, self.quota = world, quota

    def chars(self, scope: Scope) -> int:
        item = self.world.read("usage.chars", lambda: self.world.item((scope.key, USAGE_SK)))
        return max(0, item["chars"]) if item and "chars" in item else 0

    def notes_on(self, scope: Scope, day: str) -> int:
        item = self.world.read("usage.notes_on", lambda: self.world.item((scope.key, day_sk(day))))
        return int((item or {}).get("live", (item or {}).get("next_position", 0)))

    def add(self, scope: Scope, chars: int, *, once: str | None = None) -> None:
        """Move the counter by ``chars``, no quota (``UsageStore.add``); best effort, once under ``once``."""
        if chars:
            self._give("usage.add", (scope.key, USAGE_SK), {"chars": chars}, once=once)

    def give_back(self, scope: Scope, chars: int, *, once: str | None = None) -> None:
        self.add(scope, -chars, once=once)

    def give_back_notes(
        self, scope: Scope, day: str, count: int, authors: dict[str, int] | None = None, *, once: str | None = None
    ) -> None:
        """The day's ``live`` and its authors' counters less the notes gone, on a day item that counts ``live``."""
        if count:
            moves = {"live": -count} | {member_counter(user): -n for user, n in (authors or {}).items()}
            self._give("usage.give_back_notes", (scope.key, day_sk(day)), moves, once=once, counting="live")

    def _give(
        self, call: str, key: Key, moves: dict[str, int], *, once: str | None, counting: str | None = None
    ) -> None:
        """``ADD`` each of ``moves``, on condition the item does not hold ``once`` as its last give-back (a resend
        after a lost answer applies once: ``usage_store._once``) and, with ``counting``, that it holds that counter.
        Best effort, as the real one's: a refusal or a fault leaves the counters as they were."""

        def moved(item: Item | None) -> Item:
            item = dict(item or {})
            for name, delta in moves.items():
                item[name] = item.get(name, 0) + delta
            return item | ({"given_back": once} if once is not None else {})

        def allowed(item: Item | None) -> bool:
            held = item or {}
            return (counting is None or counting in held) and (once is None or held.get("given_back") != once)

        with contextlib.suppress(Cancelled, StorageUnavailable):  # a resend meets ``once``: refused, applied once
            for _ in range(SENDS):
                with contextlib.suppress(AnswerLost):
                    self.world.transact(call, [Write(key, moved, allowed)])
                    return


def _note_item(note: Note, *, write_id: str, vector: bytes | None) -> Item:
    return {"note": note, "text": note.text, "write_id": write_id, **({"vec": vector} if vector is not None else {})}


class FakeNoteStore:
    """The notes (``storage.note_store.NoteStore``): each under ``note#<day>#<position>`` of its scope, its position
    taken from the day item's counter, written with the usage counter and the due marker in one transaction."""

    def __init__(
        self,
        world: FakeWorld,
        quota: Quota | None = None,
        *,
        vectors: Callable[[str], bytes | None] | None = None,
    ) -> None:
        self.world, self.quota, self._vectors = world, quota, vectors
        self.usage = FakeUsageStore(world, quota)

    def vector_of(self, text: str) -> bytes | None:
        return self._vectors(text) if self._vectors is not None else None

    def append(
        self,
        scope: Scope,
        *,
        created: datetime,
        text: StoredText,
        source: str,
        origin: Origin,
        vector: bytes | EllipsisType | None = ...,
        completing: Callable[[Note], Write] | None = None,
    ) -> Note:
        """The day's next position (counted against the day's quotas), then the note at it with the characters
        counter and the due marker, all or nothing; a position a note already holds is skipped (a lagging counter),
        never overwritten. A write whose outcome is unknown is settled (``_settle``), as ``NoteStore.append`` does.
        ``completing``: one more write of the transaction, built from the note (the flush's claim); its refusal
        gives the position back and surfaces as ``Cancelled``, as the real one's ``ClientError``."""
        text = checked(text)
        if isinstance(vector, EllipsisType):  # not given: the store computes it, as the real one does
            vector = self.vector_of(text)
        usage = usage_move(scope, len(text), self.quota)
        day, created_at = created.date().isoformat(), iso(created)
        write_id = uuid.uuid4().hex
        member = origin.user_id if scope.kind == "team" else None
        for _ in range(POSITION_ATTEMPTS):
            position = self._take(scope, day, created, member)
            note = Note(day=day, position=position, text=text, created_at=created_at, source=source, origin=origin)
            place = note_sk(day, position)
            writes = [
                Write(
                    (scope.key, place), lambda _, note=note: _note_item(note, write_id=write_id, vector=vector), _absent
                ),
                _unless_abandoned(usage, place),
                *([completing(note)] if completing is not None else []),
                due_marker_move(scope, created_at=created_at, day=day),
            ]
            try:
                self.world.send("notes.append", writes, token=token_of(write_id, position))
            except Cancelled as refused:
                if refused.index == 0:
                    if (refused.item or {}).get("write_id") == write_id:
                        return note  # its own earlier send, answered now
                    continue  # a note holds this position: take the next one
                if refused.index == 1 and place in (refused.item or {}).get("abandoned", ()):
                    self._give_back(scope, day, None, member)  # counted by its take: given back, the next one taken
                    continue
                self._give_back(scope, day, position, member)
                if refused.index == 1:
                    raise chars_quota_error(self.quota or Quota(0, 0), len(text)) from None
                raise
            except StorageUnavailable:  # failed or every answer lost: found at its place, or its place abandoned
                if self._settle(scope, note, write_id=write_id, member=member):
                    return note
                raise
            return note
        raise StorageUnavailable("could not find a free position for the note; nothing was written, try again")

    def completion_refused(self, error: Exception) -> bool:
        """Whether ``append`` raised ``error`` because its ``completing`` write's condition failed (the third write
        of its transaction, as in the real one's): nothing was written, the position given back."""
        return isinstance(error, Cancelled) and error.index == 2

    def get(self, scope: Scope, day: str, position: int, *, consistent: bool = False) -> Note | None:
        """The note at its place, or None."""
        item = self.world.read("notes.get", lambda: self.world.item((scope.key, note_sk(day, position))))
        return item["note"] if item else None

    def get_many(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[KeyedNote]:
        """The notes at these places that exist, in the order asked, each with its partition key and the notes that
        superseded it (a note deleted meanwhile is missing, as from the real store's BatchGetItem)."""

        def found() -> list[KeyedNote]:
            items = [self.world.item((scope.key, note_sk(day, position))) for day, position in wanted]
            return [KeyedNote(scope.key, _linked(item)) for item in items if item is not None]

        return list(self.world.read("notes.get_many", found))

    def load(self, scope: Scope, note: Note) -> None:
        """A note as it was exported (``NoteStore.load``): at its own day and position, once (a resumed load changes
        nothing); an unconsolidated one makes its scope due in the same transaction; then its day's counter moves
        past it (``live`` untouched, as the real load leaves it) and its characters are counted."""
        checked(note.text)
        vector = self.vector_of(note.text)
        put = Write(
            (scope.key, note_sk(note.day, note.position)),
            lambda _: _note_item(note, write_id="load", vector=vector),
            _absent,
        )
        marker = [] if note.consolidated else [due_marker_move(scope, created_at=note.created_at, day=note.day)]
        for attempt in range(SENDS):  # sent again after a lost answer with no token, as the real put is
            try:
                self.world.transact("notes.load", [put, *marker])
                break
            except AnswerLost:
                if attempt == SENDS - 1:
                    raise
            except Cancelled as refused:
                if refused.index == 0:
                    return  # loaded before: counted and marked then
                raise

        def past(item: Item | None) -> Item:
            return {**(item or {}), "next_position": note.position}

        def behind(item: Item | None) -> bool:
            return item is None or item.get("next_position", 0) < note.position

        with contextlib.suppress(Cancelled):
            self.world.transact("notes.load_day", [Write((scope.key, day_sk(note.day)), past, behind)])
        self.usage.add(scope, len(note.text))

    def _settle(self, scope: Scope, note: Note, *, write_id: str, member: str | None) -> bool:
        """A note write whose outcome is unknown (``storage.lost_note_writes``): one more transaction finds the note
        at its place (True: written, counted once) or, on condition the place is still empty, abandons it on the
        usage item (a late send of the note is then refused) and gives the day's counts back once (False). When its
        own answers are lost, the table is read back; when nothing can be told, ``StorageUnavailable``."""
        place, day = note_sk(note.day, note.position), note.day
        once = f"delete#{place}"

        def abandoned(item: Item | None) -> Item:
            item = item or {}
            return {**item, "abandoned": frozenset(item.get("abandoned", ())) | {place}}

        def counted_here(item: Item | None) -> bool:
            return (
                bool(item)
                and "live" in item
                and item["next_position"] >= note.position
                and item.get("given_back") != once
            )

        def given_back(item: Item | None) -> Item | None:
            return _counts_less(item, member) | {"given_back": once}

        writes = [
            Write.check((scope.key, place), _absent),
            Write((scope.key, USAGE_SK), abandoned, lambda item: place not in (item or {}).get("abandoned", ())),
            Write((scope.key, day_sk(day)), given_back, counted_here),
        ]
        for _ in range(SETTLE_ATTEMPTS):
            try:
                self.world.send("notes.settle", writes, token=token_of(write_id, place, len(writes)))
                return False
            except Cancelled as refused:
                if refused.index == 0:  # the note is there: ours, or (a collision) another's
                    return (refused.item or {}).get("write_id") == write_id
                if refused.index == 1:  # this settling, sent again after its answer was lost
                    return False
                writes = writes[:2]  # given back already, or not this day's to give: abandon only
            except StorageUnavailable:  # its answers lost too: the table says which applied, if either did
                if (written := self._read_back(scope, place, write_id)) is not None:
                    return written
        raise StorageUnavailable("memory storage is unavailable; the note's outcome is unknown")

    def _read_back(self, scope: Scope, place: str, write_id: str) -> bool | None:
        """False if the place is abandoned, True if the note is at it, None if neither can be told."""
        try:
            usage = self.world.read("notes.read_back", lambda: self.world.item((scope.key, USAGE_SK))) or {}
            if place in usage.get("abandoned", ()):
                return False
            found = self.world.read("notes.read_back", lambda: self.world.item((scope.key, place))) or {}
        except StorageUnavailable:
            return None
        return True if found.get("write_id") == write_id else (False if found else None)

    def _take(self, scope: Scope, day: str, now: datetime, member: str | None) -> int:
        """The day's next position, counted against the day's notes and, in a team, the member's share."""
        quota = self.quota

        def room(item: Item | None) -> bool:
            item = item or {}
            if quota is None:
                return True
            share = quota.notes_per_member_day
            mine = item.get(member_counter(member), 0) if member else 0
            return item.get("live", 0) < quota.notes_per_day and (not member or share is None or mine < share)

        take_id, took = uuid.uuid4().hex, []

        def taken(item: Item | None) -> Item:
            item = item or {}
            counts = {member_counter(member): item.get(member_counter(member), 0) + 1} if member else {}
            took.append(item.get("next_position", 0) + 1)  # the update's answer (``ReturnValues``)
            return {**item, "next_position": took[-1], "live": item.get("live", 0) + 1, "last_take": take_id} | counts

        key = (scope.key, day_sk(day))
        try:
            self.world.send("notes.take_position", [Write(key, taken, room)], token=take_id)
        except AnswerLost:  # every answer lost: the counter's last take says whether it applied
            held = self.world.read("usage.day_item", lambda: self.world.item(key)) or {}
            if held.get("last_take") != take_id:
                raise
            return int(held["next_position"])
        except Cancelled as refused:
            assert quota is not None
            item = refused.item or {}
            share = quota.notes_per_member_day
            full = member is not None and share is not None and item.get(member_counter(member), 0) >= share
            raise notes_quota_error(quota, now, member=member if full else None) from None
        return took[0]

    def _give_back(self, scope: Scope, day: str, position: int | None, member: str | None) -> None:
        """A note not written gives its day's counts back: with ``position``, its position too when no later writer
        took one since (best effort, as the real store's: over, never under)."""

        def back(item: Item | None) -> Item | None:
            item = _counts_less(item, member)
            return item if position is None else {**item, "next_position": item["next_position"] - 1}

        def last(item: Item | None) -> bool:
            return item is not None and (position is None or item.get("next_position") == position)

        with contextlib.suppress(Cancelled, StorageUnavailable):
            self.world.transact("notes.give_back", [Write((scope.key, day_sk(day)), back, last)])

    def delete(self, scope: Scope, day: str, position: int) -> bool:
        """Remove one note, with a move of the scope's erase mark and its characters and day count given back, all or
        nothing; False if the scope holds no such note."""
        key = (scope.key, note_sk(day, position))
        note = self.world.read("notes.delete_read", lambda: self.world.item(key))
        if note is None:
            return False

        def given_back(item: Item | None) -> Item | None:
            return None if item is None else {**item, "live": item.get("live", 1) - 1}

        gone = Write(key, lambda _: None, lambda item: item is not None)
        back = [usage_move(scope, -len(note["text"]), None), Write((scope.key, day_sk(day)), given_back)]
        try:
            self.world.send("notes.delete", [gone, erase_mark_moved(scope), *back], token=token_of("delete", key))
        except Cancelled:
            return False  # deleted meanwhile, by another call
        return True

    def days_before(self, scope: Scope, *, before: str, days: int) -> tuple[list[tuple[str, list[Note]]], bool]:
        """The ``days`` newest days with notes strictly before ``before``, newest first, each with its notes newest
        first; and whether an older note exists (``NoteStore.days_before``)."""

        def listed() -> tuple[list[tuple[str, list[Note]]], bool]:
            items = self.world.between(scope.key, NOTE_PREFIX, f"{NOTE_PREFIX}{before}#", newest_first=True)
            return by_day((item["note"] for item in items), days)

        answer: tuple[list[tuple[str, list[Note]]], bool] = self.world.read("notes.days_before", listed)
        return answer

    def newest_texts(self, scope: Scope, *, limit: int, vectors: bool = False, threads: bool = False) -> list[NoteText]:
        def rows() -> list[NoteText]:
            items = self.world.between(scope.key, NOTE_PREFIX, NOTE_PREFIX + "\uffff", newest_first=True)[:limit]
            return [_note_text(scope, item, vectors=vectors, threads=threads) for item in items]

        return list(self.world.read("notes.newest_texts", rows))

    def around(self, scope: Scope, day: str, position: int, *, span: int) -> list[NoteText]:
        """The notes of ``day`` within ``span`` positions of ``position``, in place order, with their conversation."""
        low, high = note_sk(day, max(1, position - span)), note_sk(day, position + span)
        items = self.world.read("notes.around", lambda: self.world.between(scope.key, low, high))
        return [_note_text(scope, item, vectors=False, threads=True) for item in items]

    def texts_of(self, scope: Scope, wanted: list[tuple[str, int]]) -> list[NoteText]:
        """What ranking reads of these notes (text, vector, conversation), those that exist, in the order asked."""

        def found() -> list[NoteText]:
            items = [self.world.item((scope.key, note_sk(day, position))) for day, position in wanted]
            return [_note_text(scope, item, vectors=True, threads=True) for item in items if item is not None]

        return list(self.world.read("notes.texts_of", found))

    def newest_first(self, scope: Scope, *, first_day: str, last_day: str, limit: int) -> list[Note]:
        low, high = notes_of_days(first_day, last_day)
        return list(
            self.world.read(
                "notes.newest_first",
                lambda: [item["note"] for item in self.world.between(scope.key, low, high, newest_first=True)][:limit],
            )
        )

    def every_note(self, scope: Scope) -> list[Note]:
        """Every note of the scope, oldest first (what a test inspects, as the real store's ``every_note``)."""
        return [item["note"] for item in self.world.between(scope.key, NOTE_PREFIX, NOTE_PREFIX + "\uffff")]


def _note_text(scope: Scope, item: Item, *, vectors: bool, threads: bool) -> NoteText:
    """What ranking reads of a note's item (``NoteText.of``): its stored vector and its conversation when asked."""
    note: Note = item["note"]
    vector, thread = item.get("vec") if vectors else None, note.origin.thread_id if threads else None
    return NoteText(scope.key, note.day, note.position, note.text, vector, thread)


def _linked(item: Item) -> Note:
    """The note of an item with the notes that superseded it (``SUPERSEDED_BY``, as a fold's save or
    ``tests/support/seeds.world_link`` writes it), in note order, as ``note_items.note_from_item`` reads it."""
    note: Note = item["note"]
    return replace(note, superseded_by=tuple(in_note_order(item[SUPERSEDED_BY]))) if item.get(SUPERSEDED_BY) else note


def _absent(item: Item | None) -> bool:
    return item is None


def _counts_less(item: Item | None, member: str | None) -> Item:
    """The day item with one note fewer counted: ``live`` and, in a team, the member's share."""
    item = dict(item or {})
    item["live"] = item.get("live", 0) - 1
    if member:
        item[member_counter(member)] = item.get(member_counter(member), 0) - 1
    return item


def _unless_abandoned(usage: Write, place: str) -> Write:
    """A note's usage move, refused once its place is abandoned (``note_append.chars_counted``)."""
    return replace(
        usage, condition=lambda item: usage.condition(item) and place not in (item or {}).get("abandoned", ())
    )


class FakeDocumentStore:
    """The document (``storage.document_store.DocumentStore``): the head under ``doc`` and each kept version under
    ``doc#v#<n>``; a save puts the version (on condition it is new) and the head (on condition it is still at the
    version read) with the counter move and the pruned version, all or nothing.

    A consolidation's save (``pending_marks``) also puts its pending-marks record (on condition none is there) and
    checks the due marker's erase mark, and its version lists the notes it folded; ``hold_unchanged`` puts the
    record of a fold that changes nothing on the same conditions, without a version. Each version keeps its fold's
    edits and the notes each of its lines rests on, worked out by ``domain.provenance`` as the real save works them
    out. Not modelled (no use case's logic on these stores reads them): the supersession links of a fold's edits."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def current(self, scope: Scope, *, consistent: bool = False) -> Document:
        head = self.world.read("documents.current", lambda: self.world.item((scope.key, DOC_HEAD)))
        return head["document"] if head else EMPTY_DOCUMENT

    def version(self, scope: Scope, version: int) -> tuple[Document, Reason, Author] | None:
        found = self.version_and_edits(scope, version)
        return found[0] if found else None

    def version_and_edits(
        self, scope: Scope, version: int
    ) -> tuple[tuple[Document, Reason, Author], list[dict[str, Any]] | None] | None:
        item = self.world.read("documents.version", lambda: self.world.item((scope.key, version_sk(version))))
        return ((item["document"], item["reason"], item["by"]), item.get("edits")) if item else None

    def versions(self, scope: Scope, *, limit: int, below: int | None) -> list[tuple[VersionMeta, Reason, Author]]:
        """The kept versions newest first, ``limit`` of them, below ``below`` when given, without their content."""
        high = version_sk(below - 1) if below is not None else version_sk(10**10 - 1)
        items = self.world.read(
            "documents.versions", lambda: self.world.between(scope.key, version_sk(1), high, newest_first=True)
        )
        return [
            (VersionMeta(doc.version, doc.chars, doc.updated_at), item["reason"], item["by"])
            for item in items[:limit]
            if (doc := item["document"])
        ]

    def provenance(self, scope: Scope) -> tuple[Document, LineNotes]:
        """The head and each of its lines' notes (empty for a line that rests on none, or when none are recorded)."""
        current = self.current(scope, consistent=True)
        return current, of_lines(current.content, self._provenance_at(scope, current.version)[1])

    def _provenance_at(self, scope: Scope, version: int) -> tuple[str, LineNotes | None]:
        if version == 0:
            return "", None
        item = self.world.read("documents.provenance", lambda: self.world.item((scope.key, version_sk(version))))
        return (item["document"].content, item.get("line_notes")) if item else ("", None)

    def kept(self, scope: Scope) -> list[tuple[Document, Reason, Author]]:
        """Every kept version, oldest first, with why and by whom it was saved (what a test inspects)."""
        items = self.world.between(scope.key, version_sk(0), version_sk(10**10 - 1))
        return [(item["document"], item["reason"], item["by"]) for item in items]

    def version_chars(self, scope: Scope, version: int) -> int:
        item = self.world.read("documents.version_chars", lambda: self.world.item((scope.key, version_sk(version))))
        return int(item["document"].chars) if item else 0

    def save(
        self,
        scope: Scope,
        content: StoredText,
        *,
        expected_version: int,
        updated_at: str,
        reason: Reason,
        by: Author,
        pending_marks: Fold | None = None,
        usage: CharsChange | None = None,
        prune: int | None = None,
        write_id: str | None = None,
    ) -> Document:
        write_id = write_id or uuid.uuid4().hex  # one per logical write, as the real save makes it
        document = Document(content=checked(content), version=expected_version + 1, updated_at=updated_at)
        saved: Item = {"document": document, "reason": reason, "by": by, "write_id": write_id}
        before = self._provenance_at(scope, expected_version)  # each line's notes, as the real save works them out
        edits = pending_marks.edits if pending_marks is not None else None
        line_notes = follow(*before, edits, content).line_notes if edits is not None else carried(*before, content)
        saved |= ({"edits": edits} if edits is not None else {}) | (
            {"line_notes": line_notes} if any(line_notes) else {}
        )
        if pending_marks is not None:
            saved["folded_note_ids"] = pending_marks.note_ids
        writes = [
            Write((scope.key, version_sk(document.version)), lambda _: dict(saved), _absent),
            Write((scope.key, DOC_HEAD), lambda _: dict(saved), _head_at(expected_version)),
        ]
        if pending_marks is not None:
            writes.append(_pending_marks(scope, pending_marks))
        counter = len(writes)
        if usage is not None:
            writes.append(usage_move(scope, usage.delta, usage.quota))
        fenced = len(writes)
        if pending_marks is not None:
            writes.append(_erase_mark_check(scope, pending_marks.erase_mark))
        if prune:
            writes.append(Write((scope.key, version_sk(prune)), lambda _: None))
        token = token_of(write_id, scope.key, content, expected_version, updated_at, reason, prune)
        try:
            self.world.send("documents.save", writes, token=token)
        except Cancelled as refused:
            if refused.index == 0 and (refused.item or {}).get("write_id") == write_id:
                found: Document = (refused.item or {})["document"]
                return found  # this write's own version, its first answer lost
            if refused.index in (0, 1):
                raise VersionConflict(
                    f"the document is no longer at version {expected_version}; read it again and reapply the change"
                ) from None
            if refused.index == counter and usage is not None and usage.quota is not None:
                raise chars_quota_error(usage.quota, usage.delta) from None
            if refused.index == fenced:
                raise FoldedNoteGone(
                    "a note this consolidation folded was deleted or erased meanwhile; not saved, folded later"
                ) from None
            raise
        return document

    def hold_unchanged(self, scope: Scope, version: int, fold: Fold) -> None:
        """A fold that changes nothing: its pending-marks record, without a version, on condition that the head is
        still at ``version`` and the erase mark is the claim's (``DocumentStore.hold_unchanged``); a resend that
        meets its own record is done."""
        writes = [
            _pending_marks(scope, fold),
            Write.check((scope.key, DOC_HEAD), _head_at(version)),
            _erase_mark_check(scope, fold.erase_mark),
        ]
        # The token derives from the request (``request_token(fold.token, items)``): another record or version, another.
        token = token_of("hold", fold.token, fold.run_id, [note.sk for note in fold.notes], scope.key, version)
        try:
            self.world.send("documents.hold_unchanged", writes, token=token)
        except Cancelled as refused:
            if refused.index == 0 and (refused.item or {}).get("token") == fold.token:
                return  # this fold's own record, its first answer lost
            if refused.index in (0, 1):
                raise VersionConflict(f"the document is no longer at version {version}") from None
            raise FoldedNoteGone(
                "a note this consolidation read was deleted or erased meanwhile; folded later"
            ) from None


def _head_at(version: int) -> Callable[[Item | None], bool]:
    """The head is still at ``version`` (absent for version 0)."""
    return lambda item: (item is None) if version == 0 else (item is not None and item["document"].version == version)


def _pending_marks(scope: Scope, fold: Fold) -> Write:
    """The pending-marks record of a fold's save (``version_save.pending_marks_put``), on condition none is
    there."""
    record = {"note_sks": [note.sk for note in fold.notes], "run_id": fold.run_id, "token": fold.token or fold.run_id}
    return Write((scope.key, PENDING_SK), lambda _: dict(record), _absent)


def _erase_mark_check(scope: Scope, erase_mark: str) -> Write:
    """The scope's due marker still holds the erase mark the fold's claim read, and no erase is running."""
    return Write.check(
        (scope.key, DUE_SK),
        lambda item: item is not None and item.get("fence") == erase_mark and "erasing" not in item,
    )


@dataclass
class FakeStores:
    """A test's world and the stores on it, configured as ``bootstrap`` configures the real ones."""

    world: FakeWorld
    notes: FakeNoteStore
    documents: FakeDocumentStore

    @property
    def usage(self) -> FakeUsageStore:
        return self.notes.usage

    def memory_service(self, models: ScriptedChatModels | None = None, **options: Any) -> MemoryService:
        """The memory service on these stores, as ``bootstrap`` wires it on the real ones: its compression asks
        ``models``' (``tests/support/models.py``) compression model; ``options``: ``redact_extra``, ``vector_tag``."""
        scripted = models or ScriptedChatModels()
        return MemoryService(self.notes, self.documents, self.usage, lambda: scripted("compression"), **options)


def fake_stores(quota: Quota | None = None, *, vectors: Callable[[str], bytes | None] | None = None) -> FakeStores:
    """A new world with a note store (``quota``, ``vectors``), its usage counter and a document store on it."""
    world = FakeWorld()
    return FakeStores(world, FakeNoteStore(world, quota, vectors=vectors), FakeDocumentStore(world))
