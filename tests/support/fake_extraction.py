"""A named in-memory fake of the extraction's claims (``memory.ports.ExtractionClaims``, as
``storage.extraction_store.ExtractionStore``), on the shared world of ``tests/support/fake_stores.py``; the notes are
the world's ``FakeNoteStore``, whose ``append`` carries the claim's line in the note's own transaction.

What the extraction's logic rests on is kept: a claim is a conditional put (the key free, its holder's lease run out,
or the record past its TTL), whose resend after a lost answer is this call's own; a note and its line in the claim's
list land together or not at all, on condition the claim is still the caller's and in progress; ``finish`` marks it
``written`` on that same condition (refused otherwise); a release ends the lease of a claim still the caller's, and
changes nothing otherwise. Every call is named for the world's faults: ``extractions.claim``,
``extractions.finish``, ``extractions.release`` (and the notes' ``notes.append``, ``notes.get_many``...).
"""

from __future__ import annotations

from agent_memory.domain.commands import ExtractCommand
from agent_memory.storage.extraction_store import CLAIM_TTL_S, LEASE_S, ExtractionMarker
from agent_memory.storage.keys import extraction_sk
from tests.support.fake_stores import Cancelled, FakeWorld, Item, Key, Write, claim_record, held_by


def extraction_claim_key(command: ExtractCommand) -> Key:
    return (command.scope.key, extraction_sk(command.origin.thread_id, command.extraction_id))


def _marker(item: Item) -> ExtractionMarker:
    return ExtractionMarker(status=item.get("status", "in_progress"), note_ids=tuple(item.get("note_ids", ())))


class FakeExtractionStore:
    """The claims of extraction ids (``storage.extraction_store.ExtractionStore``): ``extract#<thread>#<id>``,
    ``in_progress`` for ``LEASE_S``, kept ``CLAIM_TTL_S``, listing the notes written under it."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def claim(self, command: ExtractCommand, *, token: str, now_epoch: int) -> ExtractionMarker | None:
        key = extraction_claim_key(command)
        held = claim_record(
            self.world,
            "extractions.claim",
            key,
            {"token": token},
            now_epoch=now_epoch,
            lease_s=LEASE_S,
            keep_s=CLAIM_TTL_S,
        )
        return _marker(held) if held is not None else None

    def note_recorded(self, command: ExtractCommand, *, token: str, note_id: str) -> Write:
        """The write that adds ``note_id`` to the claim's list, for the note's own transaction; it cancels the
        transaction if the claim is no longer ``token``'s."""

        def listed(item: Item | None) -> Item:
            item = item or {}
            return {**item, "note_ids": [*item.get("note_ids", ()), note_id]}

        return Write(extraction_claim_key(command), listed, held_by(token))

    def finish(self, command: ExtractCommand, *, token: str) -> None:
        """The claim marked ``written``, its lease removed; ``Cancelled`` (the real store's ClientError) if the claim
        is no longer ``token``'s. Sent once, as the real update (a lost answer is ``AnswerLost``)."""

        def written(item: Item | None) -> Item:
            kept = {name: value for name, value in (item or {}).items() if name != "lease_until"}
            return {**kept, "status": "written"}

        self.world.transact("extractions.finish", [Write(extraction_claim_key(command), written, held_by(token))])

    def release(self, command: ExtractCommand, *, token: str) -> None:
        """The claim's lease ended now, if it is still ``token``'s and in progress; else nothing changes."""
        ended = Write(extraction_claim_key(command), lambda item: {**(item or {}), "lease_until": 0}, held_by(token))
        try:
            self.world.transact("extractions.release", [ended])
        except Cancelled:
            return

    def held(self, command: ExtractCommand) -> Item | None:
        """The claim's item as it is now (what a test inspects)."""
        return self.world.item(extraction_claim_key(command))
