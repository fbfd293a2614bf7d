"""A named in-memory fake of an import's record and its notes' outcomes (``memory.ports.ImportProgress``, as
``storage.import_records.ImportRecords``), on the shared world of ``tests/support/fake_stores.py``; the notes are the
world's ``FakeNoteStore``, whose ``append`` carries a written note's outcome in the note's own transaction.

What the import's logic rests on is kept: the record is put once (or again once past its TTL), and a later call reads
it with the outcomes recorded so far, those of this record's ``expires_at`` only; each outcome is its own item, put
on condition no call recorded that number yet (an expired import's outcome of the same number is replaced); the
record is forgotten only while it holds neither a saved document nor a receipt. Every call is named for the world's
faults: ``imports.begin``, ``imports.step``, ``imports.document_saved``, ``imports.forget``, ``imports.finish``.
"""

from __future__ import annotations

import uuid
from typing import Any

from agent_memory.domain.scope import Scope
from agent_memory.storage.import_records import KEEP_S, Progress
from agent_memory.storage.keys import import_outcome_sk, import_outcomes_prefix, import_sk
from tests.support.fake_stores import Cancelled, FakeWorld, Item, Write


class FakeImportRecords:
    """Each import's record under ``import#<id>`` and its outcomes under ``imp#<id>#<n>``, as plain items."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def begin(self, scope: Scope, import_id: str, fingerprint: str, *, now_epoch: int) -> Progress:
        expires_at = now_epoch + KEEP_S
        record = {"fingerprint": fingerprint, "expires_at": expires_at}
        key = (scope.key, import_sk(import_id))
        put = Write(key, lambda _: dict(record), lambda item: item is None or item["expires_at"] < now_epoch)
        try:
            self.world.send("imports.begin", [put], token=uuid.uuid4().hex)
            return Progress(scope, import_id, fingerprint, [], None, False, expires_at)
        except Cancelled as refused:
            held = refused.item or {}
        finished = held.get("finished", False)
        expires_at = held.get("expires_at", expires_at)
        log = list(held["log"]) if finished else self._outcomes(scope, import_id, expires_at)
        return Progress(
            scope, import_id, held.get("fingerprint", ""), log, held.get("document_version"), finished, expires_at
        )

    def _outcomes(self, scope: Scope, import_id: str, expires_at: int) -> list[Any]:
        prefix = import_outcomes_prefix(import_id)
        items = self.world.read("imports.outcomes", lambda: self.world.between(scope.key, prefix, prefix + "\uffff"))
        return [list(item["outcome"]) for item in items if item["expires_at"] == expires_at]

    def step_item(self, progress: Progress, done: int, entry: Any) -> Write:
        outcome = {"outcome": list(entry), "expires_at": progress.expires_at}
        return Write(
            (progress.scope.key, import_outcome_sk(progress.import_id, done)),
            lambda _: dict(outcome),
            lambda item: item is None or item["expires_at"] < progress.expires_at,
        )

    def step(self, progress: Progress, done: int, entry: Any) -> bool:
        """Sent once, as the real put (a lost answer is ``AnswerLost``)."""
        try:
            self.world.transact("imports.step", [self.step_item(progress, done, entry)])
        except Cancelled:
            return False
        return True

    def document_saved(self, progress: Progress, version: int) -> None:
        self._update("imports.document_saved", progress, {"document_version": version})

    def forget(self, progress: Progress) -> None:
        def untouched(item: Item | None) -> bool:
            return item is None or ("document_version" not in item and "finished" not in item)

        gone = Write((progress.scope.key, import_sk(progress.import_id)), lambda _: None, untouched)
        try:
            self.world.transact("imports.forget", [gone])
        except Cancelled:
            return

    def finish(self, progress: Progress, log: list[Any]) -> None:
        self._update("imports.finish", progress, {"finished": True, "log": [list(entry) for entry in log]})

    def _update(self, call: str, progress: Progress, attributes: Item) -> None:
        key = (progress.scope.key, import_sk(progress.import_id))
        self.world.transact(call, [Write(key, lambda item: {**(item or {}), **attributes})])
