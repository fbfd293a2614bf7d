"""Facts from a stretch of conversation (docs/api.md §3 ``extract``): at most 10 notes, each citing the messages
it came from, within 10 seconds whatever the model does, at most once per ``(thread_id, extraction_id)``.

The order, and why:

1. **Claim the id** (``storage.extraction_store``): a repeat is seen before any model call and answers
   ``duplicate`` with the notes the first call wrote.
2. **The facts**: the chat model's ``save_facts`` call (``domain.extraction``), asked within what is left of
   the budget less ``WRITE_RESERVE_S``; or, with ``local:extractive``, the user's first-person statements
   (``memory.first_person``). A model that fails, answers too late or calls no ``save_facts`` is ``failed``:
   nothing is written and the claim is given back, so the same id sent again asks again.
3. **Each fact through the text pipeline** (normalised, redacted, cleaned, cut to 300 characters), then
   compared with the scope's newest notes and this call's earlier facts by the rule ``remember``'s ``similar``
   uses (``search.near_duplicates``): a fact the scope already holds is skipped and listed with those notes.
4. **Each note written with its line in the claim** (one transaction), then the claim marked ``written``.
   A storage failure on the way answers ``failed`` and gives the claim back: the notes already written stay
   (notes are append-only), and a retry skips them as facts the scope holds.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Generic

from agent_memory.basics.clock import utc_now
from agent_memory.basics.deadline import DeadlineExceeded, within
from agent_memory.basics.errors import InvalidInput, MemoryServiceError, ModelUnavailable
from agent_memory.basics.observability import logger, metrics, model_tokens
from agent_memory.domain.commands import ExtractCommand
from agent_memory.domain.extraction import (
    FACT,
    FACTS_SCHEMA,
    SAVE_FACTS,
    SAVE_FACTS_DESCRIPTION,
    Fact,
    UnreadableFacts,
    facts_of,
)
from agent_memory.domain.notes import Note, Origin, note_id, parse_note_id
from agent_memory.domain.prompts import EXTRACTION_SYSTEM, extraction_prompt
from agent_memory.domain.redaction import redact
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import ExtractedAnswer, NoteAnswer, SkippedFactAnswer
from agent_memory.domain.text_pipeline import StoredText, prepare
from agent_memory.memory.first_person import first_person_facts
from agent_memory.memory.ports import ExtractionClaims, ExtractionNotes, Recorded
from agent_memory.providers.chat import ChatModel, Tool
from agent_memory.search.near_duplicates import similar_to
from agent_memory.search.vectors import cosines_with

EXTRACTION_BUDGET_S = 10.0
# Kept back from the budget for what follows the model: the scope's newest notes, up to 10 notes (two requests
# each) and the claim's mark.
WRITE_RESERVE_S = 2.0
# What a fact's write may still need when it is begun: its vector (bounded at 1 s, as the flush note's) and its
# two requests.
NOTE_RESERVE_S = 1.5
EXTRACTION_MAX_TOKENS = 2000
# How many of the scope's newest notes each fact is compared with (as ``remember``'s ``similar``).
COMPARED_NOTES = 50
SAVE_FACTS_TOOL = Tool(SAVE_FACTS, SAVE_FACTS_DESCRIPTION, FACTS_SCHEMA)


class ExtractionFailed(Exception):
    """A reason to answer ``failed``; raised inside the extraction only, never out of it."""


@dataclass
class ExtractionService(Generic[Recorded]):
    """Generic in the item that records a note in its claim: the claims make it, the notes' transaction carries it."""

    notes: ExtractionNotes[Recorded]
    claims: ExtractionClaims[Recorded]
    chat_model: Callable[[], ChatModel | None]
    _: KW_ONLY
    # No chat model, and the facts picked from the messages (``local:extractive``, ``memory.first_person``);
    # False with no chat model: the extraction answers failed.
    extractive: bool = False
    budget_s: float = EXTRACTION_BUDGET_S
    redact_extra: frozenset[str] = frozenset()
    vector_tag: int | None = None  # the model tag of the vectors notes carry in the table (None: none there)

    def extract(self, command: ExtractCommand) -> ExtractedAnswer:
        """The answer for one extraction; storage and model failures are ``failed``, never an exception."""
        deadline = time.monotonic() + self.budget_s
        scope = command.scope
        token = uuid.uuid4().hex
        try:
            existing = self.claims.claim(command, token=token, now_epoch=int(time.time()))
        except Exception as error:  # noqa: BLE001 - an extraction answers, it never raises
            logger.exception("extraction claim failed")
            self._release(command, token)  # its outcome is unknown: given back, if it is there
            return _answer("failed", reason=f"storage: {type(error).__name__}; nothing was written")
        if existing is not None:
            if existing.status != "written":
                return _answer("failed", reason="an extraction of this id is running; send it again after it answers")
            return _answer("duplicate", notes=self._stored(scope, existing.note_ids))
        written: list[Note] = []
        try:
            facts = self._facts(list(command.messages), deadline)
            skipped = self._write(command, facts, token, written, deadline)
            self.claims.finish(command, token=token)
        except Exception as error:  # noqa: BLE001 - every failure is an answer, and the claim is given back
            # A refusal of the write (the day's quota, the characters quota) says what it is, as the flush's does.
            known = isinstance(error, ExtractionFailed | MemoryServiceError)
            reason = str(error) if known else f"storage: {type(error).__name__}"
            self._release(command, token)
            if written:
                reason += f"; {len(written)} of its notes were written and stay (a retry skips them as held)"
            logger.warning("extraction failed", extra={"scope": scope.kind, "reason": reason})
            return _answer("failed", reason=reason)
        metrics.add_metric(name="ExtractedNotes", unit="Count", value=len(written))
        logger.info("extraction written", extra={"scope": scope.kind, "notes": len(written), "skipped": len(skipped)})
        return _answer("written", notes=written, skipped=skipped)

    def _facts(self, messages: list[tuple[str, str]], deadline: float) -> list[Fact]:
        """The proposed facts: the chat model's, or without one the user's first-person statements."""
        model = self.chat_model()
        if model is None and self.extractive:
            # Redacted before any sentence is chosen or cut: a cut through a secret leaves a piece no detector knows.
            return first_person_facts([(role, redact(text, extra=self.redact_extra).text) for role, text in messages])
        if model is None:
            raise ExtractionFailed("no chat model is configured (MEMORY_CHAT_MODEL); nothing was written")
        timeout = deadline - time.monotonic() - WRITE_RESERVE_S

        def ask() -> list[Fact]:
            answer = model.ask(
                system=EXTRACTION_SYSTEM,
                prompt=extraction_prompt(messages),
                max_tokens=EXTRACTION_MAX_TOKENS,
                tool=SAVE_FACTS_TOOL,
            )
            model_tokens("extraction", answer.input_tokens, answer.output_tokens)
            return facts_of(answer.arguments, answer.text, len(messages))

        try:
            return within(timeout, ask, name="extraction-model")
        except DeadlineExceeded:
            raise ExtractionFailed(
                f"the chat model did not answer within {max(timeout, 0):.1f} s; nothing was written"
            ) from None
        except (ModelUnavailable, UnreadableFacts) as error:
            message = error.message if isinstance(error, ModelUnavailable) else str(error)
            raise ExtractionFailed(f"{message}; nothing was written") from None

    def _write(
        self, command: ExtractCommand, facts: list[Fact], token: str, written: list[Note], deadline: float
    ) -> list[SkippedFactAnswer]:
        """Write each fact the scope does not hold yet (appending each note to ``written`` as it goes); the
        skipped ones, each with the notes that already say it. A fact is begun only while ``NOTE_RESERVE_S``
        is left of the budget (its vector, its two requests): slow storage or a slow embedding model stops the
        writes, and the answer is ``failed`` in time."""
        scope = command.scope
        tag = self.vector_tag
        rows = self.notes.newest_texts(scope, limit=COMPARED_NOTES, vectors=tag is not None) if facts else []
        held = [(note_id(row.day, row.position), row.text, row.vector) for row in rows if row.pk == scope.key]
        skipped: list[SkippedFactAnswer] = []
        for fact in facts:
            if time.monotonic() + NOTE_RESERVE_S > deadline:
                raise ExtractionFailed(f"the {self.budget_s:.0f}-second budget ran out before every fact was written")
            try:
                text = prepare(fact.text, "extraction", FACT, extra=self.redact_extra).text
            except InvalidInput:
                continue  # empty after cleaning, or a heading: no fact
            vector = self.notes.vector_of(text)
            cosines = cosines_with(vector, [(ident, stored) for ident, _, stored in held], tag=tag)
            similar = similar_to(text, [(ident, other) for ident, other, _ in held], cosines=cosines)
            if similar:
                skipped.append(SkippedFactAnswer(text=text, similar=similar))
                continue
            note = self._append(command, text, fact.messages, vector, token)
            written.append(note)
            held.insert(0, (note.id, note.text, vector))
        return skipped

    def _append(
        self, command: ExtractCommand, text: StoredText, messages: tuple[int, ...], vector: bytes | None, token: str
    ) -> Note:
        origin = Origin(command.origin.user_id, command.origin.thread_id, messages=messages)

        def recorded(note: Note) -> Recorded:
            return self.claims.note_recorded(command, token=token, note_id=note.id)

        return self.notes.append(
            command.scope,
            created=utc_now(),
            text=text,
            source="extraction",
            origin=origin,
            vector=vector,
            completing=recorded,
        )

    def _stored(self, scope: Scope, note_ids: tuple[str, ...]) -> list[Note]:
        """The notes a finished claim names, those still there (a deleted note is left out)."""
        wanted = [where for ident in note_ids if (where := parse_note_id(ident)) is not None]
        try:
            return [keyed.note for keyed in self.notes.get_many(scope, wanted)] if wanted else []
        except Exception:  # noqa: BLE001 - the status is known; only the notes are missing from the answer
            logger.exception("could not read the extraction's notes")
            return []

    def _release(self, command: ExtractCommand, token: str) -> None:
        try:
            self.claims.release(command, token=token)
        except Exception:  # noqa: BLE001 - the claim's lease expires by itself
            logger.exception("could not release the extraction claim; it expires by itself")


def _answer(
    status: str,
    *,
    notes: list[Note] | None = None,
    skipped: list[SkippedFactAnswer] | None = None,
    reason: str | None = None,
) -> ExtractedAnswer:
    metrics.add_metric(name=f"Extraction{status.title()}", unit="Count", value=1)
    return ExtractedAnswer.model_validate(
        {
            "status": status,
            "notes": [NoteAnswer.of(note) for note in notes or []],
            "skipped": skipped or [],
            "reason": reason,
        }
    )
