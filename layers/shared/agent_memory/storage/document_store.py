"""The curated document in DynamoDB: a head item read by every turn, plus one immutable item per version."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, cast

from botocore.exceptions import ClientError

from agent_memory.basics.errors import MemoryServiceError, VersionConflict
from agent_memory.domain.document import EMPTY_DOCUMENT, Author, Document, Reason
from agent_memory.domain.edits import RECORDED_TEXTS
from agent_memory.domain.fold import Fold
from agent_memory.domain.provenance import Followed, LineNotes, carried, follow, of_lines
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import StoredText, checked
from agent_memory.storage.client import DynamoDB, cancellation_codes, cancelled_item, request_token
from agent_memory.storage.keys import DOC_HEAD, version_sk
from agent_memory.storage.note_items import superseded_items
from agent_memory.storage.usage_store import CharsChange, chars_change_item, chars_quota_error
from agent_memory.storage.version_save import (
    LINE_NOTES,
    TRANSACTION_MAX_ITEMS,
    gone_links,
    head_put,
    save_items,
    supersession_within,
    unchanged_items,
    version_attributes,
    version_put,
)


def _version_from_item(item: dict[str, Any]) -> tuple[Document, Reason, Author]:
    by = Author(**{key: item[f"by_{key}"]["S"] for key in ("user_id", "thread_id", "run_id") if f"by_{key}" in item})
    return _document_from_item(item), cast(Reason, item["reason"]["S"]), by


def _document_from_item(item: dict[str, Any]) -> Document:
    return Document(content=item["content"]["S"], version=int(item["version"]["N"]), updated_at=item["updated_at"]["S"])


@dataclass(frozen=True, slots=True)
class VersionMeta:
    """What the versions listing shows of a version: everything but its content."""

    version: int
    chars: int
    updated_at: str | None


# The attributes a versions listing reads (``chars`` is stored with every version since issue 15).
_VERSION_META = ("version", "chars", "updated_at", "reason", "by_user_id", "by_thread_id", "by_run_id")


class DocumentStore:
    """Writes are one transaction: the new version item and the head move together, or not at all."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def current(self, scope: Scope, *, consistent: bool = False) -> Document:
        """The head in one GetItem; version 0 when the scope has no document yet."""
        answer = self._client.get_item(
            TableName=self._table,
            Key={"pk": {"S": scope.key}, "sk": {"S": DOC_HEAD}},
            ConsistentRead=consistent,
        )
        item = answer.get("Item")
        return _document_from_item(item) if item else EMPTY_DOCUMENT

    def version(self, scope: Scope, version: int) -> tuple[Document, Reason, Author] | None:
        """One saved version as it was, with why and by whom it was saved; None if the scope never had it."""
        found = self.version_and_edits(scope, version)
        return found[0] if found else None

    def version_and_edits(
        self, scope: Scope, version: int
    ) -> tuple[tuple[Document, Reason, Author], list[dict[str, Any]] | None] | None:
        """As ``version``, with the cited edits that made it (a consolidation's edit fold), else None."""
        answer = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": scope.key}, "sk": {"S": version_sk(version)}}
        )
        item = answer.get("Item")
        if not item:
            return None
        edits = json.loads(item["edits"]["S"]) if "edits" in item else None
        return _version_from_item(item), edits

    def version_chars(self, scope: Scope, version: int) -> int:
        """The length of one kept version (0 if the scope no longer holds it): what pruning it gives back."""
        answer = self._client.get_item(
            TableName=self._table,
            Key={"pk": {"S": scope.key}, "sk": {"S": version_sk(version)}},
            ProjectionExpression="chars, content",
            ConsistentRead=True,
        )
        item = answer.get("Item") or {}
        if "chars" in item:
            return int(item["chars"]["N"])
        return len(item.get("content", {}).get("S", ""))

    def versions(self, scope: Scope, *, limit: int, below: int | None) -> list[tuple[VersionMeta, Reason, Author]]:
        """Saved versions newest first, ``limit`` of them, all below version ``below`` when given (paging):
        their metadata only (a projection without ``content``; a version saved before ``chars`` was stored
        has its content read to count it, once per listing)."""
        high = version_sk(below - 1) if below is not None else version_sk(10**10 - 1)
        answer = self._client.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={":pk": {"S": scope.key}, ":low": {"S": version_sk(1)}, ":high": {"S": high}},
            ProjectionExpression=", ".join(f"#{name}" for name in _VERSION_META),
            ExpressionAttributeNames={f"#{name}": name for name in _VERSION_META},
            ScanIndexForward=False,
            Limit=limit,
        )
        listed = []
        for item in answer["Items"]:
            by = Author(
                **{key: item[f"by_{key}"]["S"] for key in ("user_id", "thread_id", "run_id") if f"by_{key}" in item}
            )
            version = int(item["version"]["N"])
            chars = int(item["chars"]["N"]) if "chars" in item else self._counted(scope, version)
            listed.append((VersionMeta(version, chars, item["updated_at"]["S"]), cast(Reason, item["reason"]["S"]), by))
        return listed

    def _counted(self, scope: Scope, version: int) -> int:
        found = self.version(scope, version)
        return found[0].chars if found is not None else 0

    def save(
        self,
        scope: Scope,
        content: StoredText,
        *,
        expected_version: int,
        updated_at: str,
        reason: Reason,
        by: Author,
        pending_marks: Fold | None = None,
        usage: CharsChange | None = None,
        prune: int | None = None,
        write_id: str | None = None,
    ) -> Document:
        """Save ``content`` as version ``expected_version + 1``, in one transaction (``storage.version_save`` builds
        each of its items).

        With ``pending_marks`` (a consolidation's fold) the version and its pending marks are saved together: the
        version lists the notes it folded, the pending-marks record the notes still to mark, and the scope's erase
        mark must be the one the fold's claim read (``version_save.erase_mark_check``: a note deleted or an erase
        begun meanwhile refuses the save, FoldedNoteGone), one item whatever the group's size. ``usage`` moves the
        scope's characters counter in the same transaction, held to its quota when it carries one: over it, the save
        raises StorageQuotaExceeded and writes nothing. ``prune``: a version that leaves the kept history
        (``document.HISTORY_VERSIONS``), deleted in the same transaction. Raises VersionConflict when the head is no
        longer at ``expected_version``; nothing is written then. Which notes each line rests on
        (``domain.provenance``: the fold's edits, or the lines any other save kept unchanged) is worked out from
        version ``expected_version``, read once (a consistent GetItem), and recorded with the version when a line
        rests on a note.

        The version carries ``write_id`` (one per logical write, however often it is sent): when a save whose
        answer was lost is sent again (by botocore, or by the caller's own retry), its version item's
        condition fails on the version this very write saved, and that is its success, not a conflict. The
        transaction's ``ClientRequestToken`` derives from it too, so DynamoDB itself answers such a retry.
        """
        write_id = write_id or uuid.uuid4().hex
        fold = pending_marks
        # the counter's item first: a change larger than the whole quota is refused before any request
        chars = chars_change_item(self._table, scope, usage) if usage is not None else None
        document = Document(content=checked(content), version=expected_version + 1, updated_at=updated_at)
        attributes = version_attributes(scope, document, reason=reason, by=by, write_id=write_id)
        edits = fold.edits if fold is not None else None
        if edits is not None:
            for edit in edits:  # an edit's texts are stored with the version: the pipeline's too
                for key in RECORDED_TEXTS:
                    if isinstance(edit.get(key), str):
                        checked(edit[key])
            followed = follow(*self._provenance_at(scope, expected_version), edits, content)
        else:  # a whole document (by hand, a restore, a compression, a rewrite): its unchanged lines keep their notes
            followed = Followed(carried(*self._provenance_at(scope, expected_version), content))
        folded = fold.note_ids if fold is not None else None
        layout = save_items(
            self._table,
            scope,
            version=version_put(self._table, attributes, folded=folded, edits=edits, line_notes=followed.line_notes),
            head=head_put(self._table, attributes, expected_version=expected_version),
            fold=fold,
            chars=chars,
            prune=prune,
        )
        superseded = supersession_within(followed.superseded, room=TRANSACTION_MAX_ITEMS - layout.linked)
        attempts = 0
        while True:
            attempts += 1
            links = superseded_items(self._table, scope, superseded)
            sent = layout.items + links
            try:
                self._client.transact_write_items(TransactItems=sent, ClientRequestToken=request_token(write_id, sent))
                return document
            except ClientError as error:
                codes = cancellation_codes(error)
                saved = cancelled_item(error, 0) if codes[:1] == ["ConditionalCheckFailed"] else {}
                if saved.get("write_id", {}).get("S") == write_id:
                    return _document_from_item(saved)  # this write's own version, its first answer lost
                if codes[1:2] == ["ConditionalCheckFailed"] or codes[:1] == ["ConditionalCheckFailed"]:
                    raise VersionConflict(
                        f"the document is no longer at version {expected_version}; read it again and reapply the change"
                    ) from None
                if usage is not None and usage.quota is not None and layout.counter_refused(codes):
                    raise chars_quota_error(usage.quota, usage.delta) from None
                if "ConditionalCheckFailed" in codes[layout.fenced : layout.linked]:
                    raise FoldedNoteGone(
                        "a note this consolidation folded was deleted or erased meanwhile; not saved, folded later"
                    ) from None
                gone = gone_links(links, codes[layout.linked :])
                if gone:  # notes deleted before this fold began: nothing of theirs to supersede or link
                    superseded = {old: [new for new in by if new not in gone] for old, by in superseded.items()}
                    superseded = {old: by for old, by in superseded.items() if old not in gone and by}
                    continue
                if "TransactionConflict" in codes and attempts < _TRANSACTION_ATTEMPTS:
                    continue  # another transaction held the item; ours did nothing, so trying again is safe
                raise

    def _provenance_at(self, scope: Scope, version: int) -> tuple[str, LineNotes | None]:
        """Version ``version``'s content and the notes each of its lines rests on (None: none recorded), read
        consistently: every save is on condition that the head is still at that version."""
        if version == 0:
            return "", None
        item = (
            self._client.get_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": version_sk(version)}},
                ProjectionExpression=f"content, {LINE_NOTES}",
                ConsistentRead=True,
            ).get("Item")
            or {}
        )
        line_notes = json.loads(item[LINE_NOTES]["S"]) if LINE_NOTES in item else None
        return item.get("content", {}).get("S", ""), line_notes

    def provenance(self, scope: Scope) -> tuple[Document, LineNotes]:
        """The current document and, for each of its lines, the ids of the notes cited for it (``domain.provenance``:
        an empty list for a line written by hand or by a whole-document rewrite)."""
        current = self.current(scope, consistent=True)
        return current, of_lines(current.content, self._provenance_at(scope, current.version)[1])

    def hold_unchanged(self, scope: Scope, version: int, fold: Fold) -> None:
        """A fold that changes nothing: its pending-marks record, without a version, on condition that the document
        is still at ``version`` (the one the model found already holding the notes) and the scope's erase mark is
        the claim's. So the notes are marked and counted on the same crash-safe path as a saved fold's (the settle
        clears the record with the count; a worker that dies after the marks leaves the record for the next).
        Raises VersionConflict or FoldedNoteGone as ``save`` does; a retry that meets its own record is done."""
        items = unchanged_items(self._table, scope, version, fold)
        try:
            self._client.transact_write_items(TransactItems=items, ClientRequestToken=request_token(fold.token, items))
        except ClientError as error:
            codes = cancellation_codes(error)
            if (
                codes[:1] == ["ConditionalCheckFailed"]
                and cancelled_item(error, 0).get("token", {}).get("S") == fold.token
            ):
                return  # this fold's own record, its first answer lost
            if codes[1:2] == ["ConditionalCheckFailed"] or codes[:1] == ["ConditionalCheckFailed"]:
                raise VersionConflict(f"the document is no longer at version {version}") from None
            if codes[2:3] == ["ConditionalCheckFailed"]:
                raise FoldedNoteGone(
                    "a note this consolidation read was deleted or erased meanwhile; folded later"
                ) from None
            raise


_TRANSACTION_ATTEMPTS = 3


version_from_item = _version_from_item


class FoldedNoteGone(MemoryServiceError, status=409, code="note_erased"):
    """A note that a consolidation folded was deleted or erased before its version was written: the version is
    not written (the erased text never reaches a document), and the group is folded again next night."""
