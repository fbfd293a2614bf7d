"""What the nightly consolidation reads and writes besides documents: a scope's due notes, marks, runs.

- A worker reads one scope's due notes from the scope's own partition, from the day of its oldest
  unconsolidated note (the due marker's ``floor``, ``storage.due_markers``), oldest first by true age
  (instant, then day, then position as a number), only as far as one group's caps need.
- A folded group leaves a pending-marks record (``sk = consolidation#pending``) written in the same
  transaction as the document version. It lists the notes still to mark and the token of the worker that
  wrote it; the next worker on the scope finishes it before it reads anything, so a note is marked even if
  a worker dies midway, and never folded twice. It also sits in the ``Unconsolidated`` index
  (``uc_sk = #pending#<scope>``)
  so that an operator (``pending_marks``) can list what is unfinished.
- Planners are serialised by a lease (``pk = consolidation, sk = lease``) and each run is one item
  (``pk = consolidation, sk = run#<started_at>#<run_id>``) whose counts the workers move atomically.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from agent_memory.domain.fold import DueNote
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, cancellation_codes, condition_failed, query_pages, update_if
from agent_memory.storage.group_settle import (
    marker_elsewhere,
    marker_failed,
    marker_settled,
    pending_cleared,
    run_counted,
    written_by,
)
from agent_memory.storage.keys import (
    NOTE_PREFIX,
    PENDING_SK,
    PENDING_UC_SK_PREFIX,
    PLANNER_LEASE_SK,
    RUNS_PK,
    UNCONSOLIDATED_INDEX,
    unconsolidated_shards,
)
from agent_memory.storage.run_records import RunRecords

if TYPE_CHECKING:
    from agent_memory.storage.due_markers import Claim


@dataclass(frozen=True, slots=True)
class PendingMarks:
    scope: Scope
    note_sks: list[str]
    token: str | None = None


@dataclass(frozen=True, slots=True)
class DueGroup:
    """One scope's group for tonight (oldest first, within the caps) and how many due notes wait after it."""

    notes: list[DueNote]
    remaining: int


def group_within_caps(read: list[DueNote], max_notes: int, max_chars: int, *, remaining_after: int) -> DueGroup:
    """A scope's group for tonight: its oldest due notes by true age (instant, day, position as a number) up to
    ``max_notes`` and ``max_chars``; a first note longer than ``max_chars`` still forms a group of its own, so
    it never blocks its scope. ``remaining`` counts what waits for the next nights."""
    read.sort(key=lambda note: (note.created_at, note.day, note.position))
    taken: list[DueNote] = []
    chars = 0
    for note in read:
        if len(taken) == max_notes or (taken and chars + len(note.text) > max_chars):
            break
        taken.append(note)
        chars += len(note.text)
    return DueGroup(taken, len(read) - len(taken) + remaining_after)


class ConsolidationStore(RunRecords):
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def _query_unconsolidated(self, shard: str, condition: str, values: dict[str, Any]) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": UNCONSOLIDATED_INDEX,
            "KeyConditionExpression": f"uc_pk = :shard AND {condition}",
            "ExpressionAttributeValues": {":shard": {"S": shard}, **values},
            "ScanIndexForward": True,
        }
        for page in query_pages(self._client, kwargs):
            yield from page["Items"]

    def pending_marks(self) -> list[PendingMarks]:
        """Every group that a run folded but did not finish marking."""
        found = []
        for shard in unconsolidated_shards():
            for item in self._query_unconsolidated(
                shard, "begins_with(uc_sk, :p)", {":p": {"S": PENDING_UC_SK_PREFIX}}
            ):
                found.append(PendingMarks(Scope.from_key(item["pk"]["S"]), [v["S"] for v in item["note_sks"]["L"]]))
        return found

    def settle_group(
        self,
        scope: Scope,
        claim: Claim,
        run: str,
        *,
        writes: int,
        oldest: tuple[str, str] | None,
        folded: int,
        remaining: int,
        tokens: tuple[int, int] = (0, 0),
        fold: str | None = None,
    ) -> bool:
        """Settle the scope's due marker after its folded group, count the group in its run and clear the claim's
        pending record, together (one transaction, ``storage.group_settle``), with its model's ``tokens`` and
        how it was folded; False when a condition failed (the marker moved meanwhile): nothing was written."""
        return self.transact(
            [
                marker_settled(self._table, scope, claim, run, writes=writes, oldest=oldest, folded=folded),
                run_counted(self._table, run, done=1, notes=folded, remaining=remaining, tokens=tokens, fold=fold),
                pending_cleared(self._table, scope, claim.token),
            ]
        )

    def fail_group(
        self,
        scope: Scope,
        claim: Claim,
        run: str,
        *,
        remaining: int,
        tokens: tuple[int, int] = (0, 0),
    ) -> bool:
        """Mark the scope's group failed for tonight and count the failure in its run, together (one transaction,
        ``storage.group_settle``)."""
        count = run_counted(self._table, run, failed=1, remaining=remaining, tokens=tokens)
        return self.transact([marker_failed(self._table, scope, claim, run), count])

    def count_elsewhere(self, scope: Scope, run: str) -> bool:
        """Count as done in its run a group that another run's worker holds, once (one transaction with the
        marker's ``elsewhere_run``: sent again, its condition fails and nothing is counted twice;
        ``storage.group_settle``)."""
        return self.transact([marker_elsewhere(self._table, scope, run), run_counted(self._table, run, done=1)])

    def transact(self, items: list[dict[str, Any]]) -> bool:
        """One TransactWriteItems; False when an item's condition failed (nothing was written)."""
        try:
            self._client.transact_write_items(TransactItems=items)
        except ClientError as error:
            if "ConditionalCheckFailed" in cancellation_codes(error):
                return False
            raise
        return True

    def mark_consolidated(self, scope: Scope, note_sk: str) -> None:
        """Flag one note and take it out of the ``Unconsolidated`` index, where a note written before the due markers
        existed still sits; a note deleted meanwhile is simply skipped.

        Only these two attributes change: the note's text, day and position are never rewritten.
        """
        update_if(
            self._client,
            TableName=self._table,
            Key={"pk": {"S": scope.key}, "sk": {"S": note_sk}},
            UpdateExpression="SET consolidated = :true REMOVE uc_pk, uc_sk",
            ConditionExpression="attribute_exists(sk)",
            ExpressionAttributeValues={":true": {"BOOL": True}},
        )

    def unmarked(self, scope: Scope, note_sks: list[str]) -> list[str]:
        """Which of a pending record's notes are still to mark (one Query over their range, keys only): a worker
        finishing the record after a fault marks only those, so its marks move forward on each attempt instead
        of starting over (a group's hundred marks under a storage that fails one write in sixty-four)."""
        if not note_sks:
            return []
        request = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {
                ":pk": {"S": scope.key},
                ":low": {"S": min(note_sks)},
                ":high": {"S": max(note_sks)},
            },
            "ProjectionExpression": "sk, consolidated",
            "ConsistentRead": True,
        }
        wanted, left = set(note_sks), []
        for page in query_pages(self._client, request):
            for item in page["Items"]:
                if item["sk"]["S"] in wanted and item.get("consolidated") != {"BOOL": True}:
                    left.append(item["sk"]["S"])
        return left

    def clear_pending(self, scope: Scope, token: str | None = None) -> None:
        """Delete the scope's pending record; with ``token``, only the record that token wrote (a late worker
        never deletes the record of the worker that took the scope over)."""
        condition = written_by(token) if token else {}
        try:
            self._client.delete_item(TableName=self._table, Key=_pending_key(scope), **condition)
        except ClientError as error:
            if not condition_failed(error):
                raise

    def pending(self, scope: Scope) -> PendingMarks | None:
        """The scope's unfinished marks, if a worker left some (a strongly consistent read)."""
        item = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": scope.key}, "sk": {"S": PENDING_SK}}, ConsistentRead=True
        ).get("Item")
        if item is None:
            return None
        token = item.get("token", item.get("run_id", {})).get("S")
        return PendingMarks(scope, [v["S"] for v in item["note_sks"]["L"]], token)

    def due_group(self, scope: Scope, *, floor: str | None, cutoff: str, max_notes: int, max_chars: int) -> DueGroup:
        """The scope's oldest due notes within the caps, and how many due notes are left after them.

        One Query on the scope's notes from ``floor`` to the cutoff's day, unconsolidated and older than the
        cutoff only, read until the caps are met and the day of the note that met them is complete: a note
        of a later day is always younger, so sorting what was read by (instant, day, position) gives the true
        oldest notes. What is left is counted (``Select=COUNT``), never held.
        """
        request = self._notes_request(scope, floor, cutoff)
        request["Limit"] = min(max_notes + 1, 200)
        read: list[DueNote] = []
        chars = 0
        last_day: str | None = None
        for page in query_pages(self._client, request):
            for item in page["Items"]:
                note = _due_note(item)
                if last_day is not None and note.day != last_day:
                    return group_within_caps(
                        read, max_notes, max_chars, remaining_after=self._count_from(request, item)
                    )
                read.append(note)
                chars += len(note.text)
                if last_day is None and (len(read) > max_notes or chars > max_chars):
                    last_day = note.day  # the caps are met: finish this day, then stop
        return group_within_caps(read, max_notes, max_chars, remaining_after=0)

    def _notes_request(self, scope: Scope, floor: str | None, cutoff: str) -> dict[str, Any]:
        return self._unconsolidated(scope, floor, high=f"{cutoff[:10]}#~", cutoff=cutoff)

    def _unconsolidated(
        self, scope: Scope, floor: str | None, *, high: str, cutoff: str | None = None
    ) -> dict[str, Any]:
        """A strongly consistent Query of the scope's unconsolidated notes from ``floor``'s day to ``note#<high>``,
        created before ``cutoff`` when one is given."""
        values = {
            ":pk": {"S": scope.key},
            ":low": {"S": f"{NOTE_PREFIX}{floor or ''}"},
            ":high": {"S": f"{NOTE_PREFIX}{high}"},
            ":false": {"BOOL": False},
        }
        if cutoff is not None:
            values[":cutoff"] = {"S": cutoff}
        return {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "FilterExpression": "consolidated = :false" + (" AND created_at < :cutoff" if cutoff is not None else ""),
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }

    def _count_from(self, request: dict[str, Any], item: dict[str, Any]) -> int:
        """Due notes from ``item`` (included) on: a paged COUNT that holds nothing."""
        values = {**request["ExpressionAttributeValues"], ":low": item["sk"]}
        count = {
            **{k: v for k, v in request.items() if k not in ("Limit", "ExclusiveStartKey")},
            "ExpressionAttributeValues": values,
            "Select": "COUNT",
        }
        return sum(int(page["Count"]) for page in query_pages(self._client, count))

    def oldest_unconsolidated(self, scope: Scope, floor: str | None) -> tuple[str, str] | None:
        """``(created_at, day)`` of the scope's oldest unconsolidated note, due or not; None if none is left."""
        request = {
            **self._unconsolidated(scope, floor, high="~"),
            "ProjectionExpression": "created_at, #day",
            "ExpressionAttributeNames": {"#day": "day"},
            "Limit": 100,
        }
        for page in query_pages(self._client, request):
            if page["Items"]:
                first_day = page["Items"][0]["day"]["S"]
                same_day = [item["created_at"]["S"] for item in page["Items"] if item["day"]["S"] == first_day]
                return min(same_day), first_day
        return None

    def acquire_lease(self, run_id: str, *, now_epoch: int, lease_s: int) -> bool:
        """True if this run may proceed: no other run holds an unexpired lease."""
        try:
            self._client.put_item(
                TableName=self._table,
                Item={
                    "pk": {"S": RUNS_PK},
                    "sk": {"S": PLANNER_LEASE_SK},
                    "run_id": {"S": run_id},
                    "lease_until": {"N": str(now_epoch + lease_s)},
                },
                ConditionExpression="attribute_not_exists(sk) OR lease_until < :now OR run_id = :run",
                ExpressionAttributeValues={":now": {"N": str(now_epoch)}, ":run": {"S": run_id}},
            )
            return True
        except ClientError as error:
            if condition_failed(error):
                return False
            raise

    def release_lease(self, run_id: str) -> None:
        try:
            self._client.delete_item(
                TableName=self._table,
                Key={"pk": {"S": RUNS_PK}, "sk": {"S": PLANNER_LEASE_SK}},
                ConditionExpression="run_id = :run",
                ExpressionAttributeValues={":run": {"S": run_id}},
            )
        except ClientError as error:
            if not condition_failed(error):
                raise


def _pending_key(scope: Scope) -> dict[str, Any]:
    return {"pk": {"S": scope.key}, "sk": {"S": PENDING_SK}}


def _due_note(item: dict[str, Any]) -> DueNote:
    return DueNote(
        scope_key=item["pk"]["S"],
        sk=item["sk"]["S"],
        day=item["day"]["S"],
        position=int(item["position"]["N"]),
        text=item["text"]["S"],
        created_at=item["created_at"]["S"],
        vector=item.get("vec", {}).get("B"),
    )
