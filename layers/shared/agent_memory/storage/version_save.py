"""A version's save (docs/storage.md "Write protocols"): the items of its one ``TransactWriteItems``, each built by a
pure function. ``DocumentStore.save`` reads what it needs (the version it replaces), calls them and sends the
transaction; ``save_items`` lays the items out in this order and says where each sits, so that a refusal is read
by its place:

0. the new version ``doc#v#<n>`` (``version_put``), on condition it is new: its ``write_id`` tells a retry of this
   very save from a conflict;
1. the head ``doc`` (``head_put``), on condition it is still at the version the save is based on (``head_at``);
2. a fold's pending-marks record (``pending_marks_put``): the notes it folded, still to mark;
3. the scope's characters counter (``usage_store.chars_change_item``), within the quota when the write is held to it;
4. a fold's check of the scope's erase mark (``erase_mark_check``);
5. the version leaving the kept history, deleted (``pruned``);
6. the supersession's links on the notes (``note_items.superseded_items``), as many as fit beside the rest
   (``supersession_within``).

A fold that changes nothing writes its pending marks alone, with the same checks (``unchanged_items``).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from agent_memory.basics.observability import logger
from agent_memory.domain.document import Author, Document, Reason
from agent_memory.domain.fold import Fold
from agent_memory.domain.notes import note_id
from agent_memory.domain.provenance import LineNotes, in_note_order
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import (
    DOC_HEAD,
    DUE_SK,
    PENDING_SK,
    PENDING_UC_SK_PREFIX,
    parse_note_sk,
    unconsolidated_shard,
    version_sk,
)

TRANSACTION_MAX_ITEMS = 100  # DynamoDB's bound on one TransactWriteItems
# The version's attribute recording which notes each of its lines rests on (JSON: a list of lists of note ids).
LINE_NOTES = "line_notes"


def version_attributes(
    scope: Scope, document: Document, *, reason: Reason, by: Author, write_id: str
) -> dict[str, Any]:
    """What the version and the head both hold: the content (as the text pipeline made it), its length, the version,
    when, why and by whom (the ids that are set), and the save's ``write_id``."""
    ids = {"by_user_id": by.user_id, "by_thread_id": by.thread_id, "by_run_id": by.run_id}
    return {
        "pk": {"S": scope.key},
        "content": {"S": document.content},
        "chars": {"N": str(document.chars)},
        "version": {"N": str(document.version)},
        "updated_at": {"S": document.updated_at},
        "reason": {"S": reason},
        "write_id": {"S": write_id},
        **{name: {"S": value} for name, value in ids.items() if value},
    }


def version_put(
    table: str,
    attributes: dict[str, Any],
    *,
    folded: list[str] | None,
    edits: list[dict[str, Any]] | None,
    line_notes: LineNotes,
) -> dict[str, Any]:
    """The new version's item, on condition it is new (the version as it is returns on a refusal: this save's own,
    sent again after its answer was lost, or another's). A fold's version lists the notes it ``folded`` and its cited
    ``edits``; ``line_notes`` is kept when a line rests on a note."""
    item = {**attributes, "sk": {"S": version_sk(int(attributes["version"]["N"]))}}
    if folded:
        item["folded_note_ids"] = {"L": [{"S": ident} for ident in folded]}
    if edits is not None:
        item["edits"] = {"S": json.dumps(edits, ensure_ascii=False, separators=(",", ":"))}
    if any(line_notes):
        item[LINE_NOTES] = {"S": json.dumps(line_notes, separators=(",", ":"))}
    return {
        "Put": {
            "TableName": table,
            "Item": item,
            "ConditionExpression": "attribute_not_exists(sk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }


def head_at(version: int) -> dict[str, Any]:
    """The condition of a write moving the document's head: still at ``version`` (absent at version 0)."""
    if version == 0:
        return {"ConditionExpression": "attribute_not_exists(sk)"}
    return {
        "ConditionExpression": "version = :expected",
        "ExpressionAttributeValues": {":expected": {"N": str(version)}},
    }


def head_put(table: str, attributes: dict[str, Any], *, expected_version: int) -> dict[str, Any]:
    """The head, the new version's copy that a turn reads in one GetItem, on condition it is still at
    ``expected_version``."""
    return {"Put": {"TableName": table, "Item": {**attributes, "sk": {"S": DOC_HEAD}}, **head_at(expected_version)}}


def pending_marks_put(table: str, scope: Scope, fold: Fold) -> dict[str, Any]:
    """The record of which notes the new version folded and are still to mark (``storage.consolidation_store``
    finishes the marks and a group's settle deletes the record), in the ``Unconsolidated`` index for operators."""
    return {
        "Put": {
            "TableName": table,
            "Item": {
                "pk": {"S": scope.key},
                "sk": {"S": PENDING_SK},
                "note_sks": {"L": [{"S": note.sk} for note in fold.notes]},
                "run_id": {"S": fold.run_id},
                "token": {"S": fold.token or fold.run_id},
                "uc_pk": {"S": unconsolidated_shard(scope.key)},
                "uc_sk": {"S": f"{PENDING_UC_SK_PREFIX}{scope.key}"},
            },
            "ConditionExpression": "attribute_not_exists(sk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",  # sent again after a lost answer: its own record
        }
    }


def erase_mark_check(table: str, scope: Scope, erase_mark: str) -> dict[str, Any]:
    """The transaction item a fold's save carries: the scope's due marker (``storage.due_markers``) still holds the
    erase mark its claim read, and no erase is running (else the transaction is cancelled: a note the fold read may
    be gone). One item whatever the group's size."""
    return {
        "ConditionCheck": {
            "TableName": table,
            "Key": {"pk": {"S": scope.key}, "sk": {"S": DUE_SK}},
            "ConditionExpression": "fence = :mark AND attribute_not_exists(erasing)",
            "ExpressionAttributeValues": {":mark": {"S": erase_mark}},
        }
    }


def pruned(table: str, scope: Scope, version: int) -> dict[str, Any]:
    """The version leaving the kept history, deleted unconditionally: it never cancels the transaction."""
    return {"Delete": {"TableName": table, "Key": {"pk": {"S": scope.key}, "sk": {"S": version_sk(version)}}}}


class SaveItems(NamedTuple):
    """A save's items before the supersession's links, and where a refusal is read: ``counter``, the characters
    counter's place (None: no change of it); ``fenced`` to ``linked``, the fold's checks; ``linked``, where the
    links begin."""

    items: list[dict[str, Any]]
    counter: int | None
    fenced: int
    linked: int

    def counter_refused(self, codes: list[str]) -> bool:
        """Whether the characters counter's condition failed (the cancellation's ``codes``): over the quota."""
        return self.counter is not None and codes[self.counter : self.counter + 1] == ["ConditionalCheckFailed"]


def save_items(
    table: str,
    scope: Scope,
    *,
    version: dict[str, Any],
    head: dict[str, Any],
    fold: Fold | None,
    chars: dict[str, Any] | None,
    prune: int | None,
) -> SaveItems:
    """The save's items in their order (the module's list), before the supersession's links, which come last: a note
    gone long ago fails only its own."""
    items = [version, head, *([pending_marks_put(table, scope, fold)] if fold is not None else [])]
    counter = None
    if chars is not None:
        counter = len(items)
        items.append(chars)
    fenced = len(items)
    if fold is not None:  # an erase racing a consolidation: its notes' text must not be saved after it
        items.append(erase_mark_check(table, scope, fold.erase_mark))
    if prune:
        items.append(pruned(table, scope, prune))
    return SaveItems(items, counter, fenced, len(items))


def unchanged_items(table: str, scope: Scope, version: int, fold: Fold) -> list[dict[str, Any]]:
    """A fold that changes nothing: its pending-marks record, on condition that the head is still at ``version`` and
    the scope's erase mark is the claim's."""
    head = {"ConditionCheck": {"TableName": table, "Key": {"pk": {"S": scope.key}, "sk": {"S": DOC_HEAD}}}}
    head["ConditionCheck"] |= head_at(version)
    return [pending_marks_put(table, scope, fold), head, erase_mark_check(table, scope, fold.erase_mark)]


def supersession_within(superseded: dict[str, list[str]], *, room: int) -> dict[str, list[str]]:
    """The supersession that fits in the save's transaction beside its other items (``room``): each superseded
    note takes one item, and each note superseding it one more the first time. A fold that retires lines citing
    more notes than that supersedes those that fit, oldest first, and logs the rest (they stay current)."""
    kept: dict[str, list[str]] = {}
    linking: set[str] = set()
    for old in in_note_order(list(superseded)):
        by = superseded[old]
        needed = 1 + len(set(by) - linking)
        if needed > room:
            logger.warning(
                "a fold superseded more notes than one transaction holds", extra={"left": len(superseded) - len(kept)}
            )
            break
        kept[old] = by
        linking.update(by)
        room -= needed
    return kept


def gone_links(links: list[dict[str, Any]], codes: list[str]) -> set[str]:
    """The note ids of the supersession's items whose condition failed: notes no longer in the scope."""
    return {
        note_id(*parse_note_sk(link["Update"]["Key"]["sk"]["S"]))
        for link, code in zip(links, codes, strict=False)
        if code == "ConditionalCheckFailed"
    }
