"""People's control of their memory (docs/api.md §6): export, erase with a receipt, and usage against quota.

Export: pages of one JSON shape (``agent-memory-export/1``): the scope's versions, oldest first, then its
notes, oldest first, each page bounded in items and characters, so that a scope of any size exports within
the function's limits; ``next_cursor`` carries the phase, the last key read and the export's instant.

Erase: the scope's partition deleted page by page (the document's head first, so the memory is empty for
every reader at once), then the index cleared and checked empty for the scope, then the receipt. The erase
record (``storage.scope_items``) makes it resumable: a call after a crash finishes the work and answers for
both; a call after a finished erase finds nothing and answers zero counts.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory.basics.clock import iso, utc_now
from agent_memory.basics.errors import InvalidInput, StorageUnavailable
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain import shapes
from agent_memory.domain.notes import note_id
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import DOCUMENT, NOTE, prepare
from agent_memory.people.ports import (
    Counters,
    IndexToClear,
    LeftBehind,
    LoadedNotes,
    ScopePartition,
    VersionedDocument,
)
from agent_memory.storage.keys import DOC_HEAD, NOTE_PREFIX, VERSION_PREFIX, parse_note_sk, vector_sk
from agent_memory.storage.usage_store import Quota

EXPORT_FORMAT = "agent-memory-export/1"
PAGE_VERSIONS = 40  # at most 25,000 characters each: about 1 MB
PAGE_NOTES = 1000  # at most 2,000 characters each: about 2 MB, well within Lambda's 6 MB answer
STALE_PAGE = 500  # sort keys an erase record holds at once: at most 300 characters each, 150 KB of its 400 KB


def _cursor(phase: str, after: str | None, exported_at: str) -> str:
    raw = json.dumps({"p": phase, "a": after, "t": exported_at}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


# A cursor is the caller's own to keep for this long; its instant and its key are checked, never echoed blind.
CURSOR_MAX_AGE = timedelta(days=7)
_CURSOR_AFTER = {"v": re.compile(r"doc#v#\d{1,10}"), "n": re.compile(r"note#\d{4}-\d{2}-\d{2}#\d{1,10}")}


def _parse_cursor(cursor: str) -> tuple[str, str | None, str]:
    """The phase, the last key read and the export's instant of a ``next_cursor``. Anything else (a key of
    another phase, an instant that is not one this service wrote, in the future or a week old) is a 422."""
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        phase, after, at = data["p"], data["a"], data["t"]
        if phase not in ("v", "n") or not isinstance(at, str) or not (after is None or isinstance(after, str)):
            raise ValueError
        if after is not None and not _CURSOR_AFTER[phase].fullmatch(after):
            raise ValueError
        instant = datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        if iso(instant) != at or not utc_now() - CURSOR_MAX_AGE <= instant <= utc_now():
            raise ValueError
        return phase, after, at
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
        raise InvalidInput(
            "`cursor` must be the `next_cursor` of a previous answer",
            details=[{"loc": ["query", "cursor"], "msg": "invalid cursor", "type": "cursor"}],
        ) from None


def _kind(sk: str) -> str:
    if sk.startswith(NOTE_PREFIX):
        return "notes"
    if sk.startswith(VERSION_PREFIX):
        return "versions"
    return "other"


@dataclass
class People:
    items: ScopePartition
    documents: VersionedDocument
    notes: LoadedNotes
    usage_store: Counters  # the scope's characters and the days' notes (an erase gives back what it removed)
    stale: LeftBehind  # what an erase of notes leaves behind: idempotency records, flush claims, turns
    index: IndexToClear | None
    quota: Quota
    redact_extra: frozenset[str] = frozenset()  # a loaded export goes through the text pipeline as any write

    # --- export -----------------------------------------------------------------------------------------

    def export(self, scope: Scope, cursor: str | None) -> shapes.ExportAnswer:
        phase, after, exported_at = _parse_cursor(cursor) if cursor else ("v", None, iso(utc_now()))
        versions: list[shapes.ExportedVersionAnswer] = []
        notes: list[shapes.NoteAnswer] = []
        next_cursor: str | None = None
        if phase == "v":
            saved, last = self.items.versions_page(scope, after=after, limit=PAGE_VERSIONS)
            versions = [shapes.ExportedVersionAnswer.of(*version) for version in saved]
            next_cursor = _cursor("v", last, exported_at) if last else _cursor("n", None, exported_at)
        else:
            written, last = self.items.notes_page(scope, after=after, limit=PAGE_NOTES)
            notes = [shapes.NoteAnswer.of(note) for note in written]
            next_cursor = _cursor("n", last, exported_at) if last else None
        metrics.add_metric(name="ExportPages", unit="Count", value=1)
        return shapes.ExportAnswer(
            format=EXPORT_FORMAT,
            scope=scope.kind,
            exported_at=exported_at,
            document=shapes.DocumentAnswer.of(self.documents.current(scope, consistent=True)),
            versions=versions,
            notes=notes,
            next_cursor=next_cursor,
        )

    def load(self, scope: Scope, pages: list[dict[str, Any]]) -> None:
        """Load an export into an empty scope (the operator's restore; the round-trip test): every version as it
        was (by, reason, time), every note at its day and position with its origin and consolidated flag,
        the day counters past the highest position, and the characters counter."""
        from agent_memory.domain.document import Author
        from agent_memory.domain.notes import Note, Origin

        if self.documents.current(scope, consistent=True).version:
            raise InvalidInput("an export is only loaded into an empty memory")
        version = chars = 0
        for page in pages:
            if page.get("format") != EXPORT_FORMAT:
                raise InvalidInput(f"not an {EXPORT_FORMAT} document")
            for saved in page["versions"]:
                content = prepare(saved["content"], "load", DOCUMENT, extra=self.redact_extra).text
                chars += len(content)  # what is stored is counted, as every write counts it
                self.documents.save(
                    scope,
                    content,
                    expected_version=version,
                    updated_at=saved["updated_at"],
                    reason=saved["reason"],
                    by=Author(**saved["by"]),
                )
                version = saved["version"]
            for raw in page["notes"]:
                origin = raw["origin"]
                note = Note(
                    day=raw["day"],
                    position=raw["position"],
                    text=prepare(raw["text"], "load", NOTE, extra=self.redact_extra).text,
                    created_at=raw["created_at"],
                    source=raw["source"],
                    origin=Origin(
                        origin["user_id"],
                        origin["thread_id"],
                        origin.get("compaction_id"),
                        tuple(origin["messages"]) if origin.get("messages") is not None else None,
                    ),
                    consolidated=raw["consolidated"],
                )
                self.notes.load(scope, note)
        self.usage_store.add(scope, chars)

    # --- erase ------------------------------------------------------------------------------------------

    def erase(self, scope: Scope) -> shapes.ReceiptAnswer:
        """Everything the scope holds, table and index; resumable (see the module's docstring)."""
        record = "all"
        counts = {"notes": 0, "versions": 0, "other": 0, **self.items.begin_erase(scope, record, iso(utc_now()))}
        self.items.delete(scope, [DOC_HEAD])  # first: from now on every reader sees version 0
        for page in self.items.keys(scope):
            sort_keys = [item.sk for item in page]
            erased = {"notes": 0, "versions": 0, "other": 0}
            for sk in sort_keys:
                erased[_kind(sk)] += 1
            self.items.erase_page(scope, record, sort_keys, erased)
            for kind, count in erased.items():
                counts[kind] += count
        self._clear_index(scope)
        self.items.end_erase(scope, record)
        return self._receipt(scope, counts, "memory erased")

    def erase_authored(self, scope: Scope, author: str) -> shapes.ReceiptAnswer:
        """The notes of ``scope`` whose ``origin.user_id`` is ``author``: table, index and usage counter."""
        record = f"author#{author}"
        counts = {"notes": 0, "versions": 0, "other": 0, **self.items.begin_erase(scope, record, iso(utc_now()))}
        erased: set[str] = set()
        for page in self.items.keys(scope, prefix=NOTE_PREFIX, author=author):
            sort_keys = [item.sk for item in page]
            self.items.unlink(scope, page)  # first: a resumed erase finds the notes still there, and unlinks again
            vectors = [vector_sk(*parse_note_sk(sk)) for sk in sort_keys]  # their indexed vectors, where they have one
            page_id = self.items.erase_page(scope, record, sort_keys + vectors, {"notes": len(sort_keys)})
            chars = sum(item.chars for item in page)
            self.usage_store.give_back(scope, chars, once=page_id)  # sent again, its answer lost: given once
            counts["notes"] += len(sort_keys)
            erased.update(note_id(*parse_note_sk(sk)) for sk in sort_keys)
            for day, count in Counter(parse_note_sk(sk)[0] for sk in sort_keys).items():  # the days' quotas back
                self.usage_store.give_back_notes(scope, day, count, {author: count}, once=page_id)
            self._remove_from_index(scope, [note_id(*parse_note_sk(sk)) for sk in sort_keys])
        # What the notes left behind: their idempotency records and flush claims go, and so do the author's own
        # turns (a resumed erase, whose notes are gone, still finds those); the other members' turns stay, the
        # erased ids taken out. What goes is counted on the erase record, page by page, as the notes are.
        stale = self.stale.trim_and_list(scope, erased, author=author)
        for start in range(0, len(stale.gone), STALE_PAGE):
            page_keys = stale.gone[start : start + STALE_PAGE]
            self.items.erase_page(scope, record, page_keys, {"other": len(page_keys)})
            counts["other"] += len(page_keys)
        self.items.end_erase(scope, record)
        logger.info("other members' turns trimmed", extra={"scope": scope.kind, "records": stale.trimmed})
        return self._receipt(scope, counts, "authored notes erased")

    def _remove_from_index(self, scope: Scope, note_ids: list[str]) -> None:
        """Best effort: the stream indexer removes them too; ``make reindex CHECK=1`` sees any left."""
        if self.index is None or not note_ids:
            return
        from agent_memory.providers.notes_index import Remove

        try:
            self.index.bulk([Remove(scope.key, one) for one in note_ids])
        except Exception:  # noqa: BLE001 - the table is the source of truth; a reader never sees a deleted note
            logger.exception("could not remove erased notes from the index; the stream indexer will")

    def _clear_index(self, scope: Scope) -> None:
        """Every document of the scope removed, then the index checked empty for it (the drift check's count)."""
        if self.index is None:
            return
        from agent_memory.providers.notes_index import Remove

        try:
            left = self.index.note_ids(scope.key)
            if left:
                self.index.bulk([Remove(scope.key, one) for one in sorted(left)])
                self.index.refresh()
            remaining = self.index.count(scope.key)
        except Exception as error:
            logger.exception("could not clear the notes index; the erase is unfinished")
            raise StorageUnavailable("the notes index could not be cleared; call the erase again to finish") from error
        if remaining:
            raise StorageUnavailable(f"the notes index still holds {remaining} notes; call the erase again to finish")

    @staticmethod
    def _receipt(scope: Scope, counts: dict[str, int], message: str) -> shapes.ReceiptAnswer:
        metrics.add_metric(name="Erasures", unit="Count", value=1)
        metrics.add_metric(name="NotesErased", unit="Count", value=counts["notes"])
        logger.info(message, extra={"scope": scope.kind, **counts})
        return shapes.ReceiptAnswer(erased=shapes.ErasedCountsAnswer(**counts), finished_at=iso(utc_now()))

    # --- what turns were shown -------------------------------------------------------------------------

    def injections(
        self, scope: Scope, *, thread_id: str | None, limit: int, cursor: str | None
    ) -> shapes.InjectionsAnswer:
        return self.items.injections(scope, thread_id=thread_id, limit=limit, cursor=cursor, now_epoch=int(time.time()))

    # --- usage ------------------------------------------------------------------------------------------

    def usage(self, scope: Scope) -> shapes.UsageAnswer:
        return shapes.UsageAnswer(
            notes_today=self.usage_store.notes_on(scope, utc_now().date().isoformat()),
            notes_per_day_quota=self.quota.notes_per_day,
            chars=self.usage_store.chars(scope),
            chars_quota=self.quota.chars,
        )
