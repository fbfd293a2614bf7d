"""Named in-memory fakes of the flush's stores (``memory.flush.FlushClaims`` and ``FlushNotes``), on the shared world
of ``tests/support/fake_stores.py``: the claims of compaction events (``FakeFlushStore``, as
``storage.flush_store.FlushStore``) and the notes with the flush's own write (``FakeFlushNoteStore``: the fake note
store, whose ``append`` marks the claim ``written`` in the note's own transaction, as ``NoteStore`` does).

What the flush's logic rests on is kept: a claim is a conditional put (the key free, its holder's lease run out, or
the record past its TTL), whose resend after a lost answer is this call's own (its ``claim_id``); the note and its
claim's mark land together or not at all, on condition the claim is still the caller's; a release deletes only a
claim still in progress under the caller's token, and answers the marker that kept it otherwise. Every call is named
for the world's faults: ``flushes.claim``, ``flushes.earlier_claim``, ``flushes.release``, ``notes.append``,
``notes.settle``, ``notes.get``.
"""

from __future__ import annotations

from datetime import datetime

from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import StoredText
from agent_memory.storage.flush_store import CLAIM_TTL_S, LEASE_S, FlushMarker
from agent_memory.storage.keys import flush_sk, legacy_flush_sk
from tests.support.fake_stores import (
    Cancelled,
    FakeNoteStore,
    FakeWorld,
    Item,
    Key,
    Write,
    claim_free,
    claim_record,
    held_by,
)


def flush_claim_key(scope: Scope, thread_id: str, compaction_id: str) -> Key:
    return (scope.key, flush_sk(thread_id, compaction_id))


def _marker(item: Item | None) -> FlushMarker:
    """The marker an item holds (an absent one reads as the real store's: in progress, no note, no token)."""
    item = item or {}
    return FlushMarker(status=item.get("status", "in_progress"), note_id=item.get("note_id"), token=item.get("token"))


def flush_completion(scope: Scope, thread_id: str, compaction_id: str, *, token: str, note_id: str) -> Write:
    """The claim marked ``written`` with its note, its lease removed (``flush_store.completion_update``)."""

    def written(item: Item | None) -> Item:
        kept = {name: value for name, value in (item or {}).items() if name != "lease_until"}
        return {**kept, "status": "written", "note_id": note_id}

    return Write(flush_claim_key(scope, thread_id, compaction_id), written, held_by(token))


class FakeFlushStore:
    """The claims of compaction events (``storage.flush_store.FlushStore``): ``flush#<thread>#<compaction_id>``,
    ``in_progress`` for ``LEASE_S``, kept ``CLAIM_TTL_S``; the shape from before claims named their thread
    (``flush#<compaction_id>``) is read by ``earlier_claim``."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def claim(
        self, scope: Scope, thread_id: str, compaction_id: str, *, token: str, now_epoch: int
    ) -> FlushMarker | None:
        key = flush_claim_key(scope, thread_id, compaction_id)
        held = claim_record(
            self.world, "flushes.claim", key, {"token": token}, now_epoch=now_epoch, lease_s=LEASE_S, keep_s=CLAIM_TTL_S
        )
        return _marker(held) if held is not None else None

    def earlier_claim(self, scope: Scope, compaction_id: str, *, now_epoch: int) -> FlushMarker | None:
        key = (scope.key, legacy_flush_sk(compaction_id))
        item = self.world.read("flushes.earlier_claim", lambda: self.world.item(key))
        return None if claim_free(now_epoch)(item) else _marker(item)

    def release(self, scope: Scope, thread_id: str, compaction_id: str, *, token: str) -> FlushMarker | None:
        gone = Write(flush_claim_key(scope, thread_id, compaction_id), lambda _: None, held_by(token))
        try:
            self.world.transact("flushes.release", [gone])
        except Cancelled as refused:
            return _marker(refused.item)
        return None

    def held(self, scope: Scope, thread_id: str, compaction_id: str) -> Item | None:
        """The claim's item as it is now (what a test inspects)."""
        return self.world.item(flush_claim_key(scope, thread_id, compaction_id))


class FakeFlushNoteStore(FakeNoteStore):
    """The fake note store with the flush's write (``NoteStore.append_completing_flush``)."""

    def append_completing_flush(
        self, scope: Scope, *, created: datetime, text: StoredText, origin: Origin, token: str
    ) -> Note:
        """The flush's note and its claim marked ``written``, in one transaction: both or neither."""
        compaction_id = origin.compaction_id
        assert compaction_id is not None  # a flush note always carries its compaction event

        def completion(note: Note) -> Write:
            return flush_completion(scope, origin.thread_id, compaction_id, token=token, note_id=note.id)

        return self.append(scope, created=created, text=text, source="flush", origin=origin, completing=completion)
