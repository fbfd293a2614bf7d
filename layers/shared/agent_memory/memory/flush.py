"""The pre-compaction flush: one short note per compaction event, within 5 seconds, never an exception.

The chat backend calls it synchronously on its compaction path (docs/api.md §4 ``FlushFunction``), so every
path returns a status: ``written``, ``duplicate``, ``disabled`` or ``failed`` (with a reason), and a
failure leaves nothing written.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import Any, Protocol

from agent_memory.basics.clock import iso, utc_now
from agent_memory.basics.deadline import DeadlineExceeded, within
from agent_memory.basics.errors import MemoryServiceError, ModelUnavailable
from agent_memory.basics.observability import logger, metrics, model_tokens
from agent_memory.domain.commands import FlushCommand
from agent_memory.domain.notes import Note, Origin, parse_note_id, without_leading_headings
from agent_memory.domain.prompts import FLUSH_SYSTEM, flush_prompt
from agent_memory.domain.redaction import redact
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import NoteAnswer
from agent_memory.domain.text_pipeline import Form, StoredText, prepare
from agent_memory.memory.summary import summarise
from agent_memory.providers.chat import Answer, ChatModel
from agent_memory.storage.flush_store import FlushMarker

FLUSH_BUDGET_S = 5.0
FLUSH_NOTE_MAX_CHARS = 500
FLUSH_NOTE = Form(one_line=True, max_chars=FLUSH_NOTE_MAX_CHARS)
FLUSH_MAX_TOKENS = 300
# Kept back from the budget for the write after the model answers (two DynamoDB requests).
WRITE_RESERVE_S = 0.6


class FlushNotes(Protocol):
    """The notes' calls the flush makes (``storage.note_store.NoteStore``): its note written with its claim marked,
    and a note read back by its place."""

    def append_completing_flush(
        self, scope: Scope, *, created: datetime, text: StoredText, origin: Origin, token: str
    ) -> Note:
        """The note and the claim marked ``written`` in one transaction, if the claim is still ``token``'s."""
        ...

    def get(self, scope: Scope, day: str, position: int, *, consistent: bool = False) -> Note | None: ...


class FlushClaims(Protocol):
    """The claims of compaction events (``storage.flush_store.FlushStore``): one flush owns an event at a time."""

    def claim(
        self, scope: Scope, thread_id: str, compaction_id: str, *, token: str, now_epoch: int
    ) -> FlushMarker | None:
        """None when this call now owns the event, else the marker that holds it."""
        ...

    def earlier_claim(self, scope: Scope, compaction_id: str, *, now_epoch: int) -> FlushMarker | None:
        """The live claim under the key format used before keys named their thread, if any."""
        ...

    def release(self, scope: Scope, thread_id: str, compaction_id: str, *, token: str) -> FlushMarker | None:
        """None when given back, else the marker that kept it (``written`` with ``token``: the note went in)."""
        ...


class FlushFailed(Exception):
    """A reason to answer ``failed``; raised inside the flush only, never out of it."""


def _within(timeout_s: float, ask: Callable[[], Answer]) -> Answer:
    """The model's answer within ``timeout_s`` (``deadline.within``: the budget holds even when a provider's
    own timeout does not), or FlushFailed."""
    try:
        return within(timeout_s, ask, name="flush-model")
    except DeadlineExceeded:
        raise FlushFailed(f"the chat model did not answer within {timeout_s:.1f} s") from None
    except ModelUnavailable as error:
        raise FlushFailed(error.message) from None


@dataclass
class FlushService:
    notes: FlushNotes
    flushes: FlushClaims
    chat_model: Callable[[], ChatModel | None]
    _: KW_ONLY
    enabled: bool
    # No chat model, and the note summarised from the messages (``local:extractive``, ``memory.summary``);
    # False with no chat model: the flush answers failed.
    extractive: bool = False
    budget_s: float = FLUSH_BUDGET_S
    redact_extra: frozenset[str] = frozenset()

    def refused(self, refusal: MemoryServiceError) -> dict[str, Any]:
        """The answer for an event its adapter refused (``edges.events.flush_command``): ``failed`` with the
        refusal as the reason, or ``disabled`` when the flush is off; nothing is read or written."""
        if not self.enabled:
            return self._answer("disabled")
        return self._answer("failed", reason=f"{refusal.code}: {refusal.message}")

    def flush(self, command: FlushCommand) -> dict[str, Any]:
        """Answer for one compaction event; never raises."""
        deadline = time.monotonic() + self.budget_s
        if not self.enabled:
            return self._answer("disabled")
        scope, compaction_id = command.scope, command.compaction_id
        token = uuid.uuid4().hex
        try:
            now_epoch = int(time.time())
            existing = self.flushes.claim(
                scope, command.origin.thread_id, compaction_id, token=token, now_epoch=now_epoch
            )
            earlier = self._flushed_before(command, now_epoch) if existing is None else None
        except Exception as error:  # noqa: BLE001 - a flush never raises
            logger.exception("flush claim failed")
            # Its outcome is unknown: a claim applied with every answer lost would hold the event for the lease,
            # and the backend's retry would hear "duplicate" with no note. So it is given back, if it is there.
            self._release(command, token)
            return self._answer("failed", reason=f"storage: {type(error).__name__}")
        if existing is not None:
            return self._duplicate(scope, existing)
        if earlier is not None:
            self._release(command, token)
            if earlier.status != "written":
                return self._answer("failed", reason="an earlier flush of this compaction id is running; try again")
            return self._duplicate(scope, earlier)
        created, text = utc_now(), None  # what the note's write was given, for an answer its lost reply never gave
        try:
            summary, model_free = self._summary(list(command.messages), deadline)
            cleaned = prepare(summary, "flush", FLUSH_NOTE, extra=self.redact_extra)  # the summary's text
            if time.monotonic() + WRITE_RESERVE_S / 2 > deadline:  # the write needs about 0.3 s at worst
                raise FlushFailed("the 5-second budget ran out before the note could be written")
            created, text = utc_now(), cleaned.text
            note = self.notes.append_completing_flush(
                scope, created=created, text=cleaned.text, origin=command.origin, token=token
            )
        except Exception as error:  # noqa: BLE001 - every failure is an answer, and the claim is given back
            reason = str(error) if isinstance(error, FlushFailed | MemoryServiceError) else type(error).__name__
            kept = self._release(command, token)
            if kept is not None and kept.status == "written" and kept.token == token:
                # The note and the claim's mark went in one transaction, whose answer was lost (a timeout
                # after DynamoDB applied it): the note is written, and the answer must say so. It is the note
                # this call wrote, at the place the claim names: answered as written, not read back (a read
                # after lost answers may fail or run out of the budget, and the answer would lack its note).
                logger.warning("flush written although its write failed", extra={"reason": reason})
                return self._answer("written", note=_as_written(kept, text, created, command))
            logger.warning(
                "flush failed", extra={"scope": scope.kind, "compaction_id": compaction_id, "reason": reason}
            )
            return self._answer("failed", reason=reason)
        logger.info(
            "flush note written",
            extra={
                "scope": scope.kind,
                "note_id": note.id,
                "compaction_id": compaction_id,
                "redacted": cleaned.redacted,
            },
        )
        if cleaned.redacted:
            logger.warning("the flush model's note held secrets, redacted", extra={"redacted": cleaned.redacted})
        return self._answer("written", note=note, model_free=model_free)

    def _summary(self, messages: list[tuple[str, str]], deadline: float) -> tuple[str, bool]:
        """The note's text and whether no model wrote it: the chat model's summary, or without one (``extractive``)
        the messages' own sentences, the flush's model-free branch (``memory.summary``)."""
        model = self.chat_model()
        if model is None and self.extractive:
            # Redacted before any sentence is chosen or cut: a cut through a secret leaves a piece no detector knows.
            redacted = [(role, redact(content, extra=self.redact_extra).text) for role, content in messages]
            return summarise(redacted, max_chars=FLUSH_NOTE_MAX_CHARS), True
        if model is None:
            raise FlushFailed("no chat model is configured (MEMORY_CHAT_MODEL)")
        timeout = deadline - time.monotonic() - WRITE_RESERVE_S
        if timeout <= 0:
            raise FlushFailed("the 5-second budget ran out before the model could be asked")

        def ask() -> Answer:
            answer = model.ask(system=FLUSH_SYSTEM, prompt=flush_prompt(messages), max_tokens=FLUSH_MAX_TOKENS)
            model_tokens("flush", answer.input_tokens, answer.output_tokens)
            return answer

        return without_leading_headings(_within(timeout, ask).text), False  # a title above the note

    def _duplicate(self, scope: Scope, marker: FlushMarker) -> dict[str, Any]:
        if marker.status != "written" or marker.note_id is None:
            return self._answer("duplicate", reason="another invocation is flushing this compaction event")
        return self._answer("duplicate", note=self._stored_note(scope, marker))

    def _stored_note(self, scope: Scope, marker: FlushMarker) -> Note | None:
        """The note a ``written`` marker names; None if it cannot be read: the answer stands without it."""
        where = parse_note_id(marker.note_id) if marker.note_id else None
        if where is None:
            return None
        try:
            return self.notes.get(scope, *where)
        except Exception:  # noqa: BLE001 - the status is known; only the note is missing from the answer
            logger.exception("could not read the flush note")
            return None

    def _flushed_before(self, command: FlushCommand, now_epoch: int) -> FlushMarker | None:
        """The claim of this compaction event under the key format used before keys named their thread
        (``storage.flush_store``), if it is this thread's: ``written`` with a note of this thread, or still in
        progress (whose thread cannot be told yet). A note of another thread, or none, is another event's: the
        note is read consistently, as the claim was written with it (a delete of the note takes its claim too)."""
        marker = self.flushes.earlier_claim(command.scope, command.compaction_id, now_epoch=now_epoch)
        if marker is None or marker.status != "written":
            return marker
        where = parse_note_id(marker.note_id) if marker.note_id else None
        note = self.notes.get(command.scope, *where, consistent=True) if where else None
        return marker if note is not None and note.origin.thread_id == command.origin.thread_id else None

    def _release(self, command: FlushCommand, token: str) -> FlushMarker | None:
        """Give the claim back; the marker that kept it, if any (None too when the release itself failed)."""
        try:
            return self.flushes.release(command.scope, command.origin.thread_id, command.compaction_id, token=token)
        except Exception:  # noqa: BLE001 - the claim's lease expires by itself
            logger.exception("could not release the flush claim; it expires by itself")
            return None

    @staticmethod
    def _answer(
        status: str, *, note: Note | None = None, reason: str | None = None, model_free: bool = False
    ) -> dict[str, Any]:
        """The flush's answer; ``model_free: true`` when no model wrote its note (``local:extractive``)."""
        metrics.add_metric(name=f"Flush{status.title()}", unit="Count", value=1)
        answer: dict[str, Any] = {"status": status, "note": NoteAnswer.of(note).json_body() if note else None}
        if reason is not None:
            answer["reason"] = reason
        if model_free:
            answer["model_free"] = True
        return answer


def _as_written(marker: FlushMarker, text: str | None, created: datetime, command: FlushCommand) -> Note | None:
    """The flush note this call's own transaction wrote at the place ``marker`` names (``append`` stores ``created``
    as its day and ``created_at``); None only if the place is unreadable, which a marker of this call never holds."""
    where = parse_note_id(marker.note_id) if marker.note_id else None
    if where is None or text is None:
        return None
    day, position = where
    return Note(day, position, text, iso(created), "flush", command.origin)
