"""The operations behind the routes: remember, update_memory and the per-turn context."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, replace
from datetime import timedelta
from typing import Literal

from agent_memory.basics.aside import start_aside
from agent_memory.basics.clock import iso, utc_now
from agent_memory.basics.errors import InvalidInput, StorageUnavailable, VersionConflict
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain.commands import DocumentWrite
from agent_memory.domain.context_block import fit_notes, system_prompt
from agent_memory.domain.document import (
    EMPTY_DOCUMENT,
    HARD_LIMIT,
    HISTORY_VERSIONS,
    Document,
    soft_limit_warnings,
)
from agent_memory.domain.notes import Note, Origin, note_id
from agent_memory.domain.scope import Scope, ScopeKind
from agent_memory.domain.shapes import (
    DocumentAnswer,
    MemoryContextAnswer,
    NoteAnswer,
    RememberedAnswer,
    SavedDocumentAnswer,
)
from agent_memory.domain.text_pipeline import DOCUMENT, NOTE, StoredText, WritePath, prepare
from agent_memory.memory.compression import compress, refuse_incompressible
from agent_memory.memory.ports import CharactersCounter, DocumentVersions, NoteAppends
from agent_memory.providers.chat import ChatModel
from agent_memory.search.near_duplicates import newest_of_each, similar_to
from agent_memory.search.vectors import cosines_with
from agent_memory.storage.usage_store import version_change

# How many of the scope's newest notes a `remember` compares with the note it wrote (``similar``).
SIMILAR_WINDOW = 50
# Enough rows for a full 4,000-character block of the shortest possible note lines (about 20 characters each).
RECENT_NOTES_QUERY_LIMIT = 200
# Without document_version, a write re-reads the head and tries again under contention, after a random
# pause that grows with each attempt (so that racing writers spread out), for at most this long; then it
# answers 503, never 409 (docs/api.md §6): the caller gave no version, so there is nothing to conflict with.
UNVERSIONED_WRITE_BUDGET_S = 20.0  # ToolsFunction has 29 s, API Gateway 30 s
UNVERSIONED_RETRY_PAUSE_S = (0.01, 0.05)
UNVERSIONED_RETRY_PAUSE_MAX_S = 0.25


@dataclass
class MemoryService:
    """One instance per process; stores and the model are given, never created here: the stores as the storage
    calls it makes (``memory.ports``), so its tests run on in-memory ones and production on DynamoDB's."""

    notes: NoteAppends
    documents: DocumentVersions
    usage: CharactersCounter  # the characters counter's quota, which a document write is held to as the notes' are
    chat_model: Callable[[], ChatModel | None]
    _: KW_ONLY
    redact_extra: frozenset[str] = frozenset()
    vector_tag: int | None = None  # the model tag of the vectors notes carry in the table (None: none there)
    # What builds the turn's prompt (``domain.context_block``): the context's last step, after the turn's record
    # has started, so a test hands in one that waits for the record's write to see the two overlap.
    turn_prompt: Callable[[ScopeKind, Document, str | None], str] = system_prompt

    def remember(self, scope: Scope, origin: Origin, text: str) -> RememberedAnswer:
        """Append ``text`` as a note of ``scope`` written by ``origin``'s conversation."""
        cleaned = prepare(text, "remember", NOTE, extra=self.redact_extra)
        vector = self.notes.vector_of(cleaned.text)  # kept: the repeat check compares it with the recent notes'
        note = self.notes.append(
            scope,
            created=utc_now(),
            text=cleaned.text,
            source="remember",
            origin=origin,
            vector=vector,
        )
        similar = self._similar(scope, note, vector)
        metrics.add_metric(name="NotesWritten", unit="Count", value=1)
        if cleaned.truncated:
            metrics.add_metric(name="NotesTruncated", unit="Count", value=1)
        logger.info(
            "note written",
            extra={
                "scope": scope.kind,
                "note_id": note.id,
                "truncated": cleaned.truncated,
                "redacted": cleaned.redacted,
                "similar": len(similar),
            },
        )
        if similar:
            metrics.add_metric(name="NotesRepeated", unit="Count", value=1)
        return RememberedAnswer(
            note=NoteAnswer.of(note), truncated=cleaned.truncated, redacted=cleaned.redacted, similar=similar
        )

    def _similar(self, scope: Scope, note: Note, vector: bytes | None) -> list[str]:
        """The ids of the scope's ``SIMILAR_WINDOW`` newest notes near-identical to ``note`` (written with
        ``vector``), newest first: what ``remember`` answers as ``similar``, so that a model can see it repeated
        itself (notes stay append-only: the repeat is written; recall and the context block show one note per
        group, so it costs no slot). ``search.near_duplicates`` holds the rule.

        The check reads after the write, never before: a read that fails cannot stop the note, and the answer
        then says ``similar: []`` (logged). Its cost is one Query of at most 50 items, projected to keys, text
        and vector (about 20 to 45 KB: 3 to 6 read units, eventually consistent)."""
        tag = self.vector_tag
        try:
            rows = self.notes.newest_texts(
                scope, limit=SIMILAR_WINDOW + 1, vectors=tag is not None and vector is not None
            )
        except StorageUnavailable:
            logger.warning("the recent notes could not be read; remember answers without similar notes")
            return []
        others = [(note_id(row.day, row.position), row) for row in rows if row.pk == scope.key]
        others = [(ident, row) for ident, row in others if ident != note.id][:SIMILAR_WINDOW]
        cosines = cosines_with(vector, [(ident, row.vector) for ident, row in others], tag=tag)
        return similar_to(note.text, [(ident, row.text) for ident, row in others], cosines=cosines)

    def _prepared(self, text: str, path: WritePath) -> tuple[StoredText, list[str]]:
        prepared = prepare(text, path, DOCUMENT, extra=self.redact_extra)
        return prepared.text, prepared.redacted

    def update_memory(self, write: DocumentWrite, *, allow_empty: bool = False) -> SavedDocumentAnswer:
        """The one validated write path: limits, compression, history, optimistic concurrency.

        With ``expected_version`` a stale version is a 409. Without it the write applies to whatever is
        current, re-reading under contention, so it never overwrites a version it has not seen as the head.
        A compressed tool write is recorded as ``compression``; dashboard and consolidation writes keep
        their own reason. A consolidation's ``fold`` is saved with the version (its pending marks, in one transaction).
        The content goes through the text pipeline first, whoever writes (tool, dashboard, restore,
        consolidation's result: the write's reason is its path), and a compression's rewrite goes through it
        again; a text that no compression could bring under the hard limit is refused before either
        (``compression.refuse_incompressible``).
        """
        refuse_incompressible(write.content)
        content, kinds = self._prepared(write.content, write.reason)
        write = replace(write, content=content)
        if not write.content.strip() and not allow_empty:
            raise InvalidInput(
                "the document cannot be empty; clearing memory is a dashboard action",
                details=[{"loc": ["arguments", "content"], "msg": "empty content", "type": "empty_document"}],
            )
        compressed = len(write.content) > HARD_LIMIT
        if compressed:
            if write.expected_version is not None:
                self._check_current(write.scope, write.expected_version)  # fail fast before a minute-long model call
            shorter, found = self._prepared(compress(self.chat_model(), write.content), "compression")
            kinds += [kind for kind in found if kind not in kinds]
            content = shorter
            write = replace(write, content=content, reason="compression" if write.reason == "tool" else write.reason)
            metrics.add_metric(name="Compressions", unit="Count", value=1)
        document = self._save(write, content)
        metrics.add_metric(name="DocumentWrites", unit="Count", value=1)
        logger.info(
            "document saved",
            extra={
                "scope": write.scope.kind,
                "version": document.version,
                "chars": document.chars,
                "reason": write.reason,
                "redacted": kinds,
            },
        )
        warnings = soft_limit_warnings(write.content) + [f"redacted: {kind}" for kind in kinds]
        return SavedDocumentAnswer(document=DocumentAnswer.of(document), compressed=compressed, warnings=warnings)

    def _check_current(self, scope: Scope, expected_version: int) -> None:
        if self.documents.current(scope, consistent=True).version != expected_version:
            metrics.add_metric(name="VersionConflicts", unit="Count", value=1)
            raise VersionConflict(
                f"the document is no longer at version {expected_version}; read it again and reapply the change"
            )

    def _save(self, write: DocumentWrite, content: StoredText) -> Document:
        """Save ``content`` (``write.content`` as the text pipeline made it)."""
        scope, expected_version = write.scope, write.expected_version
        attempt = 0
        give_up_at = time.monotonic() + UNVERSIONED_WRITE_BUDGET_S
        while True:
            attempt += 1
            # A versioned write reads no head first: the transaction's condition on the head refuses a stale one.
            base = (
                expected_version
                if expected_version is not None
                else self.documents.current(scope, consistent=True).version
            )
            # The characters quota counts every kept version: this one, less the one leaving the history.
            prune = base + 1 - HISTORY_VERSIONS if base + 1 > HISTORY_VERSIONS else None
            change = len(content) - (self.documents.version_chars(scope, prune) if prune else 0)
            try:
                return self.documents.save(
                    scope,
                    content,
                    expected_version=base,
                    updated_at=iso(utc_now()),
                    reason=write.reason,
                    by=write.by,
                    pending_marks=write.fold,
                    usage=version_change(change, self.usage.quota, reason=write.reason),
                    prune=prune,
                    write_id=write.write_id,  # the same on every attempt: a retry that finds its own version is done
                )
            except VersionConflict:
                if expected_version is not None:
                    metrics.add_metric(name="VersionConflicts", unit="Count", value=1)
                    raise
                low, high = UNVERSIONED_RETRY_PAUSE_S
                growth = 2 ** min(attempt - 1, 6)
                pause = random.uniform(low, min(high * growth, UNVERSIONED_RETRY_PAUSE_MAX_S))  # noqa: S311 - jitter
                if time.monotonic() + pause > give_up_at:
                    metrics.add_metric(name="UnversionedWriteGaveUp", unit="Count", value=1)
                    raise StorageUnavailable(
                        "the document is being written by others and this write could not get in within "
                        f"{UNVERSIONED_WRITE_BUDGET_S:.0f} s; nothing was written, try again"
                    ) from None
                time.sleep(pause)

    def context(self, scope: Scope, shown: Callable[[int, list[str]], None] | None = None) -> MemoryContextAnswer:
        """The per-turn memory: never raises for a storage fault, it degrades instead (a turn is never blocked).
        ``shown`` hears the document's version and the block's note ids as soon as they are known, before the
        answer is built: the turn's record starts there, so its write overlaps the rest of the turn."""
        degraded: list[Literal["document", "notes", "injection_record"]] = []
        document_read = start_aside(lambda: self.documents.current(scope))  # both reads at once (basics.aside)
        today = utc_now().date()
        try:
            recent = self.notes.newest_first(
                scope,
                first_day=(today - timedelta(days=1)).isoformat(),
                last_day=today.isoformat(),
                limit=RECENT_NOTES_QUERY_LIMIT,
            )
        except Exception:  # noqa: BLE001 - same: notes are best-effort on the per-turn path
            logger.exception("notes could not be loaded; serving the turn without them")
            degraded.append("notes")
            recent = None
        try:
            document = document_read.result()
        except Exception:  # noqa: BLE001 - any fault here must degrade the turn, not fail it
            logger.exception("document could not be loaded; serving the turn without it")
            degraded.insert(0, "document")
            document = EMPTY_DOCUMENT
        # One line per group of near-identical notes (the newest of each; read whole, without vectors, so the
        # terms alone decide): a repeated fact costs the block no line.
        one_per_fact = newest_of_each(recent, {note: note.text for note in recent}) if recent is not None else None
        kept, block = fit_notes(one_per_fact) if one_per_fact is not None else ([], None)
        if shown is not None:
            shown(document.version, [note.id for note in kept])
        for part in degraded:
            metrics.add_metric(name=f"ContextDegraded{part.title()}", unit="Count", value=1)
        metrics.add_metric(name="ContextNotesInjected", unit="Count", value=len(kept))
        return MemoryContextAnswer(
            scope=scope.kind,
            document=DocumentAnswer.of(document),
            recent_notes=[NoteAnswer.of(note) for note in kept],
            system_prompt=self.turn_prompt(scope.kind, document, block),
            degraded=degraded,
        )
