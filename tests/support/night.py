"""A night on the in-memory stores (``tests/support/fake_night``): the planner and the worker wired as
``bootstrap`` wires them, on the fakes, with the caps the settings give by default."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.basics.clock import iso
from agent_memory.consolidation.planner import Planner
from agent_memory.consolidation.worker import Caps
from agent_memory.domain.commands import GroupMessage, ScheduledRun
from agent_memory.domain.fold import Fold
from agent_memory.domain.scope import Scope
from tests.support.consolidation import RUN_AT, RecordingQueue
from tests.support.fake_night import FakeConsolidationStore, FakeDueMarkers, Night, StoredNote


def team(name: int | str) -> Scope:
    return Scope("team", f"w-{name:02d}" if isinstance(name, int) else f"w-{name}")


def scheduled(*, run_id: str = "run-1", at: datetime = RUN_AT, min_age_days: int | None = None) -> ScheduledRun:
    return ScheduledRun(run_id=run_id, now=at, min_age_days=min_age_days)


@dataclass
class NightWorld:
    """The night's fakes on one world, and the writes of other use cases the night sees."""

    night: Night = field(default_factory=Night)

    def __post_init__(self) -> None:
        self.markers = FakeDueMarkers(self.night)
        self.store = FakeConsolidationStore(self.night)

    def write(self, scope: Scope, created: datetime, text: str = "a fact") -> str:
        """A note written in ``scope`` at ``created``, its scope due from then on; its sort key."""
        day, created_at = created.date().isoformat(), iso(created)
        with self.night.lock:
            notes = self.night.scope(scope).notes
            position = 1 + sum(note.day == day for note in notes.values())
            note = StoredNote(day, position, text, created_at)
            notes[note.sk] = note
        self.markers.note_written(scope, created_at=created_at, day=day)
        return note.sk

    def delete(self, scope: Scope, sk: str) -> None:
        with self.night.lock:
            del self.night.scope(scope).notes[sk]
        self.markers.note_deleted(scope)

    def hold(self, scope: Scope, fold: Fold) -> None:
        with self.night.lock:
            assert self.markers.erase_mark_holds(scope, fold.erase_mark)
            assert self.store.hold_pending(scope, fold) is None


@dataclass
class NightParts(NightWorld):
    caps: Caps = field(default_factory=lambda: Caps(min_age_days=7, max_groups=50, max_notes=200, max_chars=20_000))
    queued: bool = True
    queue: RecordingQueue = field(default_factory=RecordingQueue)

    def __post_init__(self) -> None:
        super().__post_init__()
        queue = self.queue if self.queued else None
        self.planner = Planner(self.store, self.markers, None, self.caps, concurrency=8, reserve_s=120.0, queue=queue)  # type: ignore[arg-type]

    def due(self, scope: Scope, created: datetime, text: str = "a fact") -> str:
        return self.write(scope, created, text)

    def sent(self) -> list[GroupMessage]:
        return [message for batch in self.queue.batches for message in batch]

    @staticmethod
    def now_epoch() -> int:
        """The planner's clock for its lease (the wall clock, as in production)."""
        return int(time.time())


def night_world() -> NightWorld:
    return NightWorld()


def night(
    *, min_age_days: int = 7, max_groups: int = 50, max_notes: int = 200, max_chars: int = 20_000, queued: bool = True
) -> NightParts:
    """The night's parts on fresh fakes; ``queued``: the planner sends to a recording queue, else it folds here."""
    caps = Caps(min_age_days=min_age_days, max_groups=max_groups, max_notes=max_notes, max_chars=max_chars)
    return NightParts(caps=caps, queued=queued)
