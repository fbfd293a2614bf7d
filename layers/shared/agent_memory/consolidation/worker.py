"""The consolidation's worker: it folds one due scope's group (one queue message, or one group of a planner that
folds in its own process), each step safe to die after (docs/consolidation.md):

1. claim the scope (a lease on its due marker, ``storage.due_markers``; a message of a run that already finished
   the scope is a no-op);
2. read the document (strongly consistent), finish the marks an earlier worker left pending, and read the
   scope's oldest due notes within the caps (instant, then day, then position as a number);
3. ask the chat model for cited edits to the document (``consolidation.folding``: a retry, then a whole
   rewrite; without a model, dated bullets), save the result through the same validated path as
   ``update_memory`` on condition the document is still at the version read in step 2, together with a
   pending-marks record; a conflict goes back to step 2, a few times, otherwise the group fails ("nothing
   to change" saves no version, only the pending record, on the same conditions); so does a save refused
   by a note's delete (the erase mark), under the erase mark that delete left, unless an erase is running;
4. mark the notes, clear the record, advance the marker and count the group in its run, atomically.
Any save after another worker's is refused by the version condition, and any read after it sees its
pending record or its marks: two workers, runs or planners never fold the same note.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from agent_memory.basics.errors import MemoryServiceError, StorageUnavailable, VersionConflict
from agent_memory.basics.observability import logger
from agent_memory.consolidation.folding import GroupFailed, propose, redacted
from agent_memory.consolidation.ports import DocumentWriter, FoldDocuments, FoldMarkers, FoldStore
from agent_memory.domain.commands import DocumentWrite, GroupMessage
from agent_memory.domain.document import Author
from agent_memory.domain.fold import Fold
from agent_memory.domain.scope import Scope
from agent_memory.providers.chat import ChatModel
from agent_memory.storage.document_store import FoldedNoteGone
from agent_memory.storage.due_markers import Claim, ClaimRefused


@dataclass(frozen=True, slots=True)
class Caps:
    """A night's caps: the planner reads ``min_age_days`` and ``max_groups``, the worker one group's
    ``max_notes`` and ``max_chars``."""

    min_age_days: int
    max_groups: int
    max_notes: int
    max_chars: int


# Attempts of a storage call that failed (a timeout, a throttle) where the message is not delivered again: a group
# folded in the planner's own process, a failure's count.
STORAGE_ATTEMPTS = 3
_SETTLE_ATTEMPTS = 5
# A concurrent update_memory refuses a fold's save; each attempt asks the model again, so a few, not many. Six:
# every save now reads the version it replaces first (the lines' notes), so a burst of hand edits holds the head
# longer, and four attempts lost the race in 2 of 4 runs of tests/load/test_one_scope.py (0 of 10 with six).
FOLD_ATTEMPTS = 6


@dataclass
class Worker:
    """Its storage through the ports (``consolidation.ports``)."""

    service: DocumentWriter  # a fold is a document write through the tools' own validated path
    documents: FoldDocuments
    store: FoldStore
    markers: FoldMarkers
    chat_model: Callable[[], ChatModel | None]
    caps: Caps
    vector_tag: int | None = None  # the tag of the vectors stored on notes: the fold without a model compares them

    def fold(self, message: GroupMessage, token: str, *, final: bool, claim_s: int, storage_attempts: int = 1) -> str:
        """Fold the message's group: ``folded``, ``failed`` (for good tonight), ``duplicate`` (this run has the
        scope already) or ``elsewhere`` (another run's worker holds it). Raises when the queue should deliver
        the message again (``final`` is false), or for an unexpected error. ``storage_attempts``: a storage
        fault (a timeout, a throttle) is tried again under the same claim, after a pause, that many times in
        all (the planner folding in its own process; a worker's message is delivered again instead)."""
        scope = Scope.from_key(message.scope)
        try:
            claim = self.markers.claim(scope, token, message.run, now_epoch=int(time.time()), lease_s=claim_s)
        except ClaimRefused as refused:
            if refused.why == "done":
                return "duplicate"
            self._count(message.run, self.store.count_elsewhere(scope, message.run))
            return "elsewhere"
        seen = {"due": message.notes, "input": 0, "output": 0}
        try:
            folded, remaining, kind = self._fold_claimed_retrying(scope, claim, message, seen, storage_attempts)
        except Exception as error:
            expected = isinstance(error, GroupFailed | MemoryServiceError)
            reason = str(error) if expected else type(error).__name__
            logger.warning(
                "consolidation group failed",
                extra={"scope": scope.key, "reason": reason, "final": final},
                exc_info=None if expected else error,
            )
            if not final:
                self.markers.release(scope, claim)
                raise
            if isinstance(error, StorageUnavailable) and self._settle_saved(scope, claim, message, seen):
                return "folded"
            if isinstance(error, GroupFailed):
                seen["input"] += error.tokens[0]
                seen["output"] += error.tokens[1]
            self._count_failure(scope, claim, message, reason, seen)
            if not expected:
                raise
            return "failed"
        self._settle(scope, claim, message, (folded, remaining), ((seen["input"], seen["output"]), kind))
        return "folded"

    def _fold_claimed_retrying(
        self, scope: Scope, claim: Claim, message: GroupMessage, seen: dict[str, int], attempts: int
    ) -> tuple[int, int, str | None]:
        """``_fold_claimed``, tried again under the same claim after a storage fault, ``attempts`` times in all."""
        for attempt in range(1, attempts + 1):
            try:
                return self._fold_claimed(scope, claim, message, seen)
            except StorageUnavailable:
                if attempt == attempts:
                    raise
                logger.info("storage fault while folding; trying again", extra={"scope": scope.key})
                time.sleep(random.uniform(0.5, 1.0) * attempt)  # noqa: S311 - jitter
        raise AssertionError("unreachable")

    def _fold_claimed(
        self, scope: Scope, claim: Claim, message: GroupMessage, seen: dict[str, int]
    ) -> tuple[int, int, str | None]:
        """Fold the group: how many notes, how many left, and how (``folding.Kind``; None when an earlier worker's
        fold was only finished). Adds the model's tokens to ``seen``."""
        model = self.chat_model()
        for attempt in range(1, FOLD_ATTEMPTS + 1):
            current = self.documents.current(scope, consistent=True)  # first: any later save is refused
            finished = self._finish_pending(scope, claim.token)
            group = self.store.due_group(
                scope,
                floor=claim.floor,
                cutoff=message.cutoff,
                max_notes=self.caps.max_notes,
                max_chars=self.caps.max_chars,
            )
            seen["due"] = len(group.notes) + group.remaining
            if finished or not group.notes:  # this claim's own fold, saved before a fault: it is the group
                return finished, seen["due"] if finished else group.remaining, None
            proposal = propose(model, current, group.notes, vector_tag=self.vector_tag)
            seen["input"] += proposal.input_tokens
            seen["output"] += proposal.output_tokens
            try:
                applied = redacted(proposal.edits, self.service.redact_extra)
                fold = Fold(group.notes, message.run_id, claim.token, claim.erase_mark, applied)
                if proposal.kind == "unchanged":  # no version, but the same pending record, so the same safety
                    self.documents.hold_unchanged(scope, current.version, fold)
                    break
                by = Author(run_id=message.run_id)
                write = DocumentWrite(scope, proposal.content, current.version, "consolidation", by, fold)
                self.service.update_memory(write)
                break
            except VersionConflict:
                if attempt == FOLD_ATTEMPTS:
                    raise GroupFailed(f"the document changed during all {FOLD_ATTEMPTS} attempts") from None
                logger.info("document changed during consolidation; folding again", extra={"scope": scope.key})
                time.sleep(random.uniform(0.05, 0.25) * attempt)  # noqa: S311 - jitter: let a burst of writers pass
            except FoldedNoteGone:  # a note's delete: the rest, read again under the mark it left, fold tonight
                mark = None if attempt == FOLD_ATTEMPTS else self.markers.read(scope).erase_mark
                if mark is None:  # an erase runs, or the marker lost its erase mark: the group fails for the night
                    raise
                logger.info("a note was deleted during consolidation; folding the rest", extra={"scope": scope.key})
                claim = replace(claim, erase_mark=mark)
        for note in group.notes:
            self.store.mark_consolidated(scope, note.sk)
        return len(group.notes), group.remaining, proposal.kind  # the settle clears the pending record

    def _finish_pending(self, scope: Scope, token: str) -> int:
        """Mark what an earlier worker folded but did not mark; how many, if that worker had this very claim (it
        died, or lost an answer, after its save: the notes count for this group, and the record stays for the
        settle to clear with the count, so a fault before the settle never loses them from the run's count)."""
        pending = self.store.pending(scope)
        if pending is None:
            return 0
        for note_sk in self.store.unmarked(scope, pending.note_sks):
            self.store.mark_consolidated(scope, note_sk)
        if pending.token == token:
            return len(pending.note_sks)
        self.store.clear_pending(scope, pending.token)
        logger.info(
            "finished pending marks of an earlier worker", extra={"scope": scope.key, "notes": len(pending.note_sks)}
        )
        return 0

    def _settle(
        self,
        scope: Scope,
        claim: Claim,
        message: GroupMessage,
        counts: tuple[int, int],
        cost: tuple[tuple[int, int], str | None],
    ) -> None:
        """Move the marker to the oldest note left and count the group, in one transaction; again if a note
        was written meanwhile; not at all if another worker took the scope over (it counts instead)."""
        for _ in range(_SETTLE_ATTEMPTS):
            writes, holder, _ = self.markers.read(scope)
            if holder != claim.token:
                return
            oldest = self.store.oldest_unconsolidated(scope, claim.floor)
            (folded, remaining), (tokens, kind) = counts, cost
            counted = self.store.settle_group(
                scope,
                claim,
                message.run,
                writes=writes,
                oldest=oldest,
                folded=folded,
                remaining=remaining,
                tokens=tokens,
                fold=kind,
            )
            if self._count(message.run, counted):
                return
        raise StorageUnavailable("the scope's due marker kept changing; the message will be delivered again")

    def _settle_saved(self, scope: Scope, claim: Claim, message: GroupMessage, seen: dict[str, int]) -> bool:
        """After storage failed a group throughout its attempts: if its version was saved (its pending record holds
        this claim), its notes are in the document, so it is finished and counted folded, not failed, once storage
        answers again. False if it was not saved, or storage still fails (then it is counted failed, and the next
        claim on the scope finishes its marks, counted in no run)."""
        try:
            folded = self._finish_pending(scope, claim.token)
            if folded:
                cost = ((seen["input"], seen["output"]), None)
                self._settle(scope, claim, message, (folded, max(seen["due"] - folded, 0)), cost)
        except Exception:  # noqa: BLE001 - storage still failing (or refusing): the group is counted failed instead
            logger.warning("could not settle a group saved before its failure", extra={"scope": scope.key})
            return False
        return folded > 0

    def _count_failure(
        self, scope: Scope, claim: Claim, message: GroupMessage, reason: str, seen: dict[str, int]
    ) -> None:
        """Count a group that failed for good tonight, once, with its model's tokens: the count moves with the
        marker's ``last_run`` (one transaction), so sending it again after a lost answer, or after a storage
        fault, never counts it twice; with storage failing throughout it is not counted (logged)."""
        due, tokens = seen["due"], (seen["input"], seen["output"])
        counted = False
        for attempt in range(1, STORAGE_ATTEMPTS + 1):
            try:
                failed = self.store.fail_group(scope, claim, message.run, remaining=due, tokens=tokens)
                counted = self._count(message.run, failed)
                break
            except StorageUnavailable:
                if attempt == STORAGE_ATTEMPTS:
                    logger.error("could not count the group's failure in its run", extra={"scope": scope.key})
                    return
                time.sleep(random.uniform(0.5, 1.0) * attempt)  # noqa: S311 - jitter
        if counted:
            try:
                self.store.list_failure(message.run, scope.key, reason)
            except Exception:  # noqa: BLE001 - the count has it; the listing of reasons is best effort
                logger.exception("could not list the group's failure in its run", extra={"scope": scope.key})

    def _count(self, run: str, counted: bool) -> bool:
        """After a group's count in its run (``counted``: False if its transaction's condition failed), finish the
        run if it was the last group; also when not ``counted``: the refusal may be this count's own first
        attempt, applied with its answer lost, which then finished nothing."""
        try:
            self.store.finish_if_complete(run)
        except Exception:  # noqa: BLE001 - a later group or the planner finishes the run
            logger.exception("could not finish the run", extra={"run": run})
        return counted
