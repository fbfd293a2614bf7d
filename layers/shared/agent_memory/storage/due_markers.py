"""The due markers: one item per scope that has unconsolidated notes, which the nightly planner reads and a
worker claims and settles (docs/consolidation.md).

One item per scope, in the scope's own partition (``sk = consolidation#due``): the **due marker**. While
the scope holds an unconsolidated note the marker sits in the sparse ``Unconsolidated`` index with
``uc_pk = uc#NN`` (the scope's shard) and ``uc_sk = due#<oldest>#<pk>``, ``oldest`` being the creation
instant of its oldest unconsolidated note. So the planner reads one small item per scope (never a note),
in true-age order, and its memory does not grow with the backlog.

Attributes:
- ``oldest``, ``floor`` (that note's day: every note before it is consolidated), ``notes`` (how many are
  unconsolidated; a deleted note leaves it high until the scope is emptied), ``writes`` (a counter that
  only grows, so an advance can tell that a note was written meanwhile);
- ``folding``/``folding_until``: the claim of the worker folding the scope now (a lease, so that a
  duplicate message does not ask the model twice); ``last_run``: the run that last finished the scope, so
  a message of that run delivered again is a no-op;
- ``fence`` and ``erasing``: the erase mark (stored as ``fence``, its first name, so that markers already
  written read the same), a token that a claim sets when the marker has none (derived from the claim's token)
  and that every deletion of notes replaces with a random one (a note's delete in its own transaction, an
  erase as it begins and as it ends); ``erasing`` is set while an erase runs. A fold's save checks, in its
  transaction, that the marker still holds the token its claim read and no erase is running: one
  ``ConditionCheck`` however many notes the group folds (it used to be one per note, up to 100 transaction
  items, which made a 200-note save time out on moto). A marker erased and written again has no erase mark
  until it is claimed again, so a fold that read the scope before an erase never saves after it.

Every note write updates the marker inside the note's own transaction (``storage.note_append``, no extra request):
a note is never stored without its scope being due, and a retried transaction (its answer lost) cannot
count it twice, because the note's conditional put fails with it. A note older than the marker's
``oldest`` (or ``floor``) refuses the usual item; the transaction is sent again with an item that sets
both to the older values, on condition the marker is still as it was seen. A worker advances the marker
(or takes it out of the ``Unconsolidated`` index) on condition that ``writes`` did not move since it looked, so a note
written meanwhile is never forgotten.
"""

from __future__ import annotations

import heapq
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from botocore.exceptions import ClientError

from agent_memory.domain.scope import Scope
from agent_memory.storage.client import (
    DynamoDB,
    condition_failed,
    query_pages,
    update_if,
)
from agent_memory.storage.keys import (
    DUE_SK,
    DUE_UC_SK_PREFIX,
    UNCONSOLIDATED_INDEX,
    unconsolidated_shards,
)

# Markers read per page and shard: the planner holds at most 16 pages of these at once.
_PLAN_PAGE = 100


@dataclass(frozen=True, slots=True)
class DueScope:
    scope_key: str
    oldest: str
    notes: int


@dataclass(frozen=True, slots=True)
class Claim:
    """A worker's hold on a scope: what the marker said when it was taken."""

    token: str
    floor: str | None
    writes: int
    erase_mark: str


class MarkerNow(NamedTuple):
    """What a worker reads of its scope's marker: ``writes``, the claim's token (``holder``), and the erase
    mark (None while an erase runs or when the marker has none: erased, or written again since)."""

    writes: int
    holder: str | None
    erase_mark: str | None


class ClaimRefused(Exception):
    """The scope is not this worker's to fold now: ``why`` is ``done`` (this run finished it) or ``held``."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def marker_update(table: str, scope: Scope, update: str, condition: str, values: dict[str, Any]) -> dict[str, Any]:
    """A transaction item updating the scope's due marker: ``update``, on ``condition``."""
    return {
        "Update": {
            "TableName": table,
            "Key": {"pk": {"S": scope.key}, "sk": {"S": DUE_SK}},
            "UpdateExpression": update,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        }
    }


def erase_mark_move(table: str, scope: Scope) -> dict[str, Any]:
    """The transaction item that moves the erase mark with a note's delete (on condition the marker exists: a
    scope without one has no fold to refuse, and no marker is made for it)."""
    return marker_update(table, scope, "SET fence = :mark", "attribute_exists(sk)", {":mark": {"S": uuid.uuid4().hex}})


class DueMarkers:
    """The scopes' due markers: the planner's read of the due scopes, a worker's claim and its release, and the erase
    mark an erase moves (a group's settle builds its items in ``storage.group_settle``)."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    def _update(self, scope: Scope, update: str, condition: str | None, values: dict[str, Any]) -> bool:
        return update_if(
            self._client,
            TableName=self._table,
            Key={"pk": {"S": scope.key}, "sk": {"S": DUE_SK}},
            UpdateExpression=update,
            ExpressionAttributeValues=values,
            **({"ConditionExpression": condition} if condition else {}),
        )

    def due_scopes(self, cutoff: str) -> Iterator[DueScope]:
        """Scopes whose oldest unconsolidated note is strictly older than ``cutoff``, oldest first (then by
        scope), across the 16 shards: a merge of 16 paged Queries, so at most 16 pages are held at once."""
        streams = [self._shard_due(shard, cutoff) for shard in unconsolidated_shards()]
        return heapq.merge(*streams, key=lambda due: (due.oldest, due.scope_key))

    def _shard_due(self, shard: str, cutoff: str) -> Iterator[DueScope]:
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": UNCONSOLIDATED_INDEX,
            "KeyConditionExpression": "uc_pk = :shard AND uc_sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {
                ":shard": {"S": shard},
                ":low": {"S": DUE_UC_SK_PREFIX},
                ":high": {"S": f"{DUE_UC_SK_PREFIX}{cutoff}"},  # "due#<cutoff>#..." sorts after it: strictly older
            },
            "ProjectionExpression": "pk, oldest, notes",
            "Limit": _PLAN_PAGE,
        }
        for page in query_pages(self._client, request):
            for item in page["Items"]:
                yield DueScope(item["pk"]["S"], item["oldest"]["S"], int(item.get("notes", {}).get("N", "0")))

    def claim(self, scope: Scope, token: str, run_id: str, *, now_epoch: int, lease_s: int) -> Claim:
        """Take the scope for ``lease_s`` seconds, unless another token holds an unexpired claim or this
        run already finished the scope (then ClaimRefused). The same token may take its claim again (a
        message delivered again after its worker died)."""
        try:
            answer = self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": DUE_SK}},
                UpdateExpression=(
                    "SET folding = :token, folding_until = :until, folding_run = :run,"
                    " fence = if_not_exists(fence, :mark)"
                ),
                ConditionExpression=(
                    "attribute_exists(sk)"  # an erased scope has no marker: nothing to fold, and none is made
                    " AND (attribute_not_exists(folding_until) OR folding_until <= :now OR folding = :token)"
                    " AND (attribute_not_exists(last_run) OR last_run <> :run)"
                ),
                ExpressionAttributeValues={
                    ":token": {"S": token},
                    ":until": {"N": str(now_epoch + lease_s)},
                    ":now": {"N": str(now_epoch)},
                    ":run": {"S": run_id},
                    # the same on a retried claim: two attempts of one claim racing on an engine without
                    # isolation (plain moto) cannot leave one erase mark stored and answer the other
                    ":mark": {"S": f"claim:{token}"},
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as error:
            if condition_failed(error):
                old = error.response.get("Item") or {}
                ours = run_id in (old.get("last_run", {}).get("S"), old.get("folding_run", {}).get("S"))
                raise ClaimRefused("done" if ours or not old else "held") from None
            raise
        item = answer["Attributes"]
        floor = item.get("floor", {}).get("S")
        return Claim(token, floor, int(item.get("writes", {}).get("N", "0")), item["fence"]["S"])

    def erasing(self, scope: Scope, *, running: bool) -> None:
        """An erase begins (``running``) or ends: the erase mark moves either way, and ``erasing`` refuses every
        fold's save in between (an erase that stopped midway keeps refusing them until it is called again)."""
        self._update(
            scope,
            "SET fence = :mark, erasing = :true" if running else "SET fence = :mark REMOVE erasing",
            "attribute_exists(sk)",
            {":mark": {"S": uuid.uuid4().hex}, **({":true": {"BOOL": True}} if running else {})},
        )

    def read(self, scope: Scope) -> MarkerNow:
        """The marker as it is now (a strongly consistent read)."""
        item = self._client.get_item(
            TableName=self._table,
            Key={"pk": {"S": scope.key}, "sk": {"S": DUE_SK}},
            ConsistentRead=True,
            ProjectionExpression="writes, folding, fence, erasing",
        ).get("Item", {})
        erase_mark = None if "erasing" in item else item.get("fence", {}).get("S")
        return MarkerNow(int(item.get("writes", {}).get("N", "0")), item.get("folding", {}).get("S"), erase_mark)

    def release(self, scope: Scope, claim: Claim) -> None:
        """Give the claim back without settling (a failure that the queue will deliver again)."""
        self._update(
            scope, "REMOVE folding, folding_until, folding_run", "folding = :token", {":token": {"S": claim.token}}
        )
