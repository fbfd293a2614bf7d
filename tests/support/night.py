"""A night on the in-memory stores (``tests/support/fake_stores``, ``tests/support/fake_night``): the planner and the
worker wired as ``bootstrap`` wires them, with the caps the settings give by default, the tools' own
``MemoryService`` for the fold's save, and the test's scripted models (``tests/support/models``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.consolidation.delivery import fold_queued
from agent_memory.consolidation.planner import Planner
from agent_memory.consolidation.worker import Caps, Worker
from agent_memory.domain.commands import GroupMessage, QueuedGroup, ScheduledRun
from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.memory.service import MemoryService
from agent_memory.storage.keys import note_sk, parse_note_sk, version_sk
from tests.support.consolidation import RUN_AT, Died, RecordingQueue, merge
from tests.support.fake_night import FakeConsolidationStore, FakeDueMarkers
from tests.support.fake_stores import FakeStores, fake_stores
from tests.support.fakes import FakeChatModel
from tests.support.models import ScriptedChatModels
from tests.support.scopes import stored

MAX_RECEIVES = 3
DEFAULT_CAPS = Caps(min_age_days=7, max_groups=50, max_notes=200, max_chars=20_000)


def team(name: int | str) -> Scope:
    return Scope("team", f"w-{name:02d}" if isinstance(name, int) else f"w-{name}")


def scheduled(*, run_id: str = "run-1", at: datetime = RUN_AT, min_age_days: int | None = None) -> ScheduledRun:
    return ScheduledRun(run_id=run_id, now=at, min_age_days=min_age_days)


@dataclass
class NightWorld:
    """The night's stores on one fake world, and the writes of other use cases the night sees."""

    stores: FakeStores = field(default_factory=fake_stores)

    def __post_init__(self) -> None:
        self.world = self.stores.world
        self.markers = FakeDueMarkers(self.world)
        self.store = FakeConsolidationStore(self.world)
        self.documents = self.stores.documents

    def write(self, scope: Scope, created: datetime, text: str = "a fact") -> str:
        """A note written as ``remember`` writes it, its scope due from then on; its sort key."""
        note = self.stores.notes.append(
            scope, created=created, text=stored(text), source="remember", origin=Origin("u-1", "t-1"), vector=None
        )
        return note_sk(note.day, note.position)

    def delete(self, scope: Scope, sk: str) -> None:
        """A note's delete as the dashboard makes it."""
        assert self.stores.notes.delete(scope, *parse_note_sk(sk))


@dataclass
class NightParts(NightWorld):
    """The planner and the worker on the night's stores: the planner sends to ``queue`` when ``queued``, else it has
    the worker fold the groups in its own process."""

    caps: Caps = DEFAULT_CAPS
    queued: bool = True
    models: ScriptedChatModels = field(default_factory=lambda: ScriptedChatModels(fold=FakeChatModel(reply=merge)))
    queue: RecordingQueue = field(default_factory=RecordingQueue)

    def __post_init__(self) -> None:
        super().__post_init__()
        stores = self.stores
        self.service = MemoryService(
            stores.notes, stores.documents, stores.usage, chat_model=lambda: self.models("compression")
        )
        self.worker = Worker(
            self.service,
            stores.documents,
            self.store,
            self.markers,
            chat_model=lambda: self.models("fold"),
            caps=self.caps,
        )
        queue = self.queue if self.queued else None
        self.planner = Planner(
            self.store, self.markers, self.worker, self.caps, concurrency=4, reserve_s=120.0, queue=queue
        )

    def sent(self) -> list[GroupMessage]:
        return [message for batch in self.queue.batches for message in batch]

    def consolidate(
        self, at: datetime = RUN_AT, *, run_id: str = "run-1", remaining_ms: int = 900_000
    ) -> dict[str, object]:
        """A night's run, as ConsolidateFunction runs it, with ``remaining_ms`` of the invocation left throughout."""
        return self.planner.run(scheduled(run_id=run_id, at=at), lambda: remaining_ms)

    def deliver(self, message: GroupMessage, message_id: str = "m-1", *, final: bool = True) -> str:
        """One delivery of a queue message to the worker (``consolidation.delivery``), its last receive if ``final``
        (``MEMORY_CONSOLIDATION_MAX_RECEIVES`` and ``MEMORY_CONSOLIDATION_CLAIM_S`` as the settings give them)."""
        group = QueuedGroup(message_id, MAX_RECEIVES if final else 1, message)
        return fold_queued(self.worker, group, max_receives=MAX_RECEIVES, claim_s=330)

    @property
    def fold_model(self) -> FakeChatModel:
        model = self.models.fold
        assert isinstance(model, FakeChatModel)
        return model

    def notes(self, scope: Scope) -> list[Note]:
        return self.stores.notes.every_note(scope)

    def marked(self, scope: Scope) -> list[bool]:
        return [note.consolidated for note in self.notes(scope)]

    def folded_counts(self, scope: Scope) -> dict[str, int]:
        """How many document versions folded each note: exactly once is the invariant."""
        counts: dict[str, int] = {}
        for version in range(1, self.stores.documents.current(scope).version + 1):
            for note_id in (self.world.item((scope.key, version_sk(version))) or {}).get("folded_note_ids", []):
                counts[note_id] = counts.get(note_id, 0) + 1
        return counts

    def die_at(self, call: str, *, after: int = 0) -> None:
        """The process dies (``Died``) just before the call named ``call`` that follows ``after`` of them."""
        left = [after]

        def hook() -> None:
            if not left[0]:
                raise Died(call)
            left[0] -= 1
            self.world.faults.before(call, hook)

        self.world.faults.before(call, hook)

    @staticmethod
    def now_epoch() -> int:
        """The planner's and the worker's clock for their leases (the wall clock, as in production)."""
        return int(time.time())


def night_world() -> NightWorld:
    return NightWorld()


def night(
    *, min_age_days: int = 7, max_groups: int = 50, max_notes: int = 200, max_chars: int = 20_000, queued: bool = True
) -> NightParts:
    """The night's parts on a fresh world."""
    caps = Caps(min_age_days=min_age_days, max_groups=max_groups, max_notes=max_notes, max_chars=max_chars)
    return NightParts(caps=caps, queued=queued)
