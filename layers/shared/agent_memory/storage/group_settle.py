"""A group's settle (docs/storage.md "Write protocols"): the one ``TransactWriteItems`` that ends a worker's claim on a
scope and counts its group in the run, each item built by a pure function. ``ConsolidationStore`` sends them:

- a folded group (``settle_group``): the scope's due marker moved on to the oldest unconsolidated note left
  (``marker_settled``, on condition no note was written since the claim and the claim is still the worker's), the
  run's counts (``run_counted``), and the claim's pending-marks record deleted (``pending_cleared``);
- a group that failed for good tonight (``fail_group``): the marker records the run (``marker_failed``), the
  run counts the failure;
- a group another run's worker holds (``count_elsewhere``): counted once as done (``marker_elsewhere``).

Each carries the run on the marker, on condition it is not there yet: sent again, the transaction is refused and
nothing is counted twice.
"""

from __future__ import annotations

from typing import Any

from agent_memory.domain.scope import Scope
from agent_memory.storage.due_markers import Claim, marker_update
from agent_memory.storage.keys import PENDING_SK, RUNS_PK, due_index_sk, unconsolidated_shard
from agent_memory.storage.run_records import FOLDS, TOKENS


def marker_settled(
    table: str,
    scope: Scope,
    claim: Claim,
    run_id: str,
    *,
    writes: int,
    oldest: tuple[str, str] | None,
    folded: int,
) -> dict[str, Any]:
    """The transaction item that ends a claim: the marker moves to the oldest unconsolidated note left
    (``(created_at, day)``), or leaves the ``Unconsolidated`` index when none is left; ``last_run`` records the run.
    Only if no note was written since ``writes`` was read, the claim is still ours, and this run has
    not settled the scope already (so a run's counts move once per scope)."""
    values: dict[str, Any] = {
        ":token": {"S": claim.token},
        ":run": {"S": run_id},
        ":writes": {"N": str(writes)},
    }
    if oldest is None:
        update = "SET last_run = :run REMOVE folding, folding_until, folding_run, uc_pk, uc_sk, oldest, floor, notes"
    else:
        update = (
            "SET last_run = :run, oldest = :at, floor = :day, uc_pk = :shard, uc_sk = :uc_sk"
            " REMOVE folding, folding_until, folding_run ADD notes :minus"
        )
        values |= {
            ":at": {"S": oldest[0]},
            ":day": {"S": oldest[1]},
            ":shard": {"S": unconsolidated_shard(scope.key)},
            ":uc_sk": {"S": due_index_sk(oldest[0], scope.key)},
            ":minus": {"N": str(-folded)},
        }
    condition = (
        "folding = :token AND (attribute_not_exists(writes) OR writes = :writes)"
        " AND (attribute_not_exists(last_run) OR last_run <> :run)"
    )
    return marker_update(table, scope, update, condition, values)


def marker_failed(table: str, scope: Scope, claim: Claim, run_id: str) -> dict[str, Any]:
    """The transaction item that ends a claim on a group that failed for good tonight: the marker stays
    as it was (its notes are due again next night) and records the run, once."""
    return marker_update(
        table,
        scope,
        "SET last_run = :run REMOVE folding, folding_until, folding_run",
        "folding = :token AND (attribute_not_exists(last_run) OR last_run <> :run)",
        {":token": {"S": claim.token}, ":run": {"S": run_id}},
    )


def marker_elsewhere(table: str, scope: Scope, run_id: str) -> dict[str, Any]:
    """The transaction item that lets a run count, once, a scope that another run's worker holds."""
    return marker_update(
        table,
        scope,
        "SET elsewhere_run = :run",
        "attribute_exists(sk) AND (attribute_not_exists(elsewhere_run) OR elsewhere_run <> :run)",
        {":run": {"S": run_id}},
    )


def run_counted(
    table: str,
    run: str,
    *,
    done: int = 0,
    failed: int = 0,
    notes: int = 0,
    remaining: int = 0,
    tokens: tuple[int, int] = (0, 0),
    fold: str | None = None,
) -> dict[str, Any]:
    """The transaction item adding one group's outcome to its run's counts (with the marker's settle): with
    the ``(input, output)`` tokens its model calls reported and how it was folded (``fold``, a key of FOLDS)."""
    adds = "ADD groups_done :d, groups_failed :f, notes_consolidated :n, notes_remaining :r"
    values = {
        ":d": {"N": str(done)},
        ":f": {"N": str(failed)},
        ":n": {"N": str(notes)},
        ":r": {"N": str(remaining)},
    }
    if any(tokens):
        adds += f", {TOKENS['input']} :ti, {TOKENS['output']} :to"
        values |= {":ti": {"N": str(tokens[0])}, ":to": {"N": str(tokens[1])}}
    if fold in FOLDS:
        adds += f", {FOLDS[fold]} :one"
        values[":one"] = {"N": "1"}
    return {
        "Update": {
            "TableName": table,
            "Key": {"pk": {"S": RUNS_PK}, "sk": {"S": run}},
            "UpdateExpression": adds,
            "ExpressionAttributeValues": values,
        }
    }


def pending_cleared(table: str, scope: Scope, token: str) -> dict[str, Any]:
    """The transaction item deleting the claim's own pending record with its group's count (if it left one)."""
    ours = written_by(token)
    absent_or_ours = {**ours, "ConditionExpression": f"attribute_not_exists(sk) OR {ours['ConditionExpression']}"}
    return {"Delete": {"TableName": table, "Key": {"pk": {"S": scope.key}, "sk": {"S": PENDING_SK}}, **absent_or_ours}}


def written_by(token: str) -> dict[str, Any]:
    """The condition that the scope's pending record is the one ``token`` wrote."""
    return {
        "ConditionExpression": "#token = :token",
        "ExpressionAttributeNames": {"#token": "token"},
        "ExpressionAttributeValues": {":token": {"S": token}},
    }
