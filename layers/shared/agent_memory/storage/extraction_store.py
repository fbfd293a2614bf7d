"""At most one extraction per ``(thread_id, extraction_id)`` in a scope: a claim beside the scope's notes that lists
the notes the extraction wrote (``sk = extract#<thread_id>#<extraction_id>``).

As the flush's claim (``storage.flush_store``): the extraction first claims its id with a conditional put (a
repeat is seen there, before any model call). Each fact's note is written in one transaction with the claim's
list of note ids (``note_recorded``), so the claim names exactly the notes that exist; ``finish`` marks it
``written``. A failed extraction gives its claim back (``release``: its lease ends) so that the same id can be sent
again; one that died without releasing leaves a lease that expires after ``LEASE_S``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.domain.commands import ExtractCommand
from agent_memory.storage.client import DynamoDB, claim_record, condition_failed
from agent_memory.storage.keys import extraction_sk

# Longer than ToolsFunction's timeout (29 s), so a live extraction never loses its claim to a repeat.
LEASE_S = 30
# DynamoDB's TTL removes a claim after this long, as the flush's.
CLAIM_TTL_S = 30 * 24 * 3600
_OURS = "#status = :in_progress AND #token = :token"
_NAMES = {"#status": "status", "#token": "token"}


@dataclass(frozen=True, slots=True)
class ExtractionMarker:
    """What an earlier call left for this extraction id."""

    status: str  # "in_progress" or "written"
    note_ids: tuple[str, ...]


def _key(command: ExtractCommand) -> dict[str, Any]:
    sk = extraction_sk(command.origin.thread_id, command.extraction_id)
    return {"pk": {"S": command.scope.key}, "sk": {"S": sk}}


def _ours(token: str) -> dict[str, Any]:
    return {":in_progress": {"S": "in_progress"}, ":token": {"S": token}}


class ExtractionStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def claim(self, command: ExtractCommand, *, token: str, now_epoch: int) -> ExtractionMarker | None:
        """One request: None if this call now owns the extraction id, else the marker that is already there."""
        item = {**_key(command), "token": {"S": token}}
        held = claim_record(self._client, self._table, item, now_epoch=now_epoch, lease_s=LEASE_S, keep_s=CLAIM_TTL_S)
        return _marker(held) if held is not None else None

    def note_recorded(self, command: ExtractCommand, *, token: str, note_id: str) -> dict[str, Any]:
        """The transaction item that adds a note to the claim's list (``NoteStore.append`` writes it with the
        note, as its ``completing`` item); it fails the note's transaction if the claim is no longer ``token``'s."""
        return {
            "Update": {
                "TableName": self._table,
                "Key": _key(command),
                "UpdateExpression": "SET note_ids = list_append(if_not_exists(note_ids, :none), :id)",
                "ConditionExpression": _OURS,
                "ExpressionAttributeNames": _NAMES,
                "ExpressionAttributeValues": {**_ours(token), ":none": {"L": []}, ":id": {"L": [{"S": note_id}]}},
            }
        }

    def finish(self, command: ExtractCommand, *, token: str) -> None:
        """Mark the claim ``written``: from now on the id answers ``duplicate`` with the notes it lists."""
        written = {":written": {"S": "written"}}
        self._if_ours(command, token, "SET #status = :written REMOVE lease_until", written)

    def release(self, command: ExtractCommand, *, token: str) -> None:
        """Give the id back after a failure (only if the claim is still ours and not finished): its lease ends
        now, so the next call with this id claims it at once. An update, not a delete: ToolsFunction, which
        serves the extraction, deletes nothing."""
        try:
            self._if_ours(command, token, "SET lease_until = :ended", {":ended": {"N": "0"}})
        except ClientError as error:
            if not condition_failed(error):
                raise

    def _if_ours(self, command: ExtractCommand, token: str, update: str, values: dict[str, Any]) -> None:
        """``update`` (with its ``values``) applied to the claim if it is still ``token``'s and in progress."""
        self._client.update_item(
            TableName=self._table,
            Key=_key(command),
            UpdateExpression=update,
            ConditionExpression=_OURS,
            ExpressionAttributeNames=_NAMES,
            ExpressionAttributeValues={**_ours(token), **values},
        )


def _marker(item: dict[str, Any]) -> ExtractionMarker:
    return ExtractionMarker(
        status=item.get("status", {}).get("S", "in_progress"),
        note_ids=tuple(one["S"] for one in item.get("note_ids", {}).get("L", [])),
    )
