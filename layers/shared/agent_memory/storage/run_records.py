"""A consolidation run's record: one item (``pk = consolidation, sk = run#<started_at>#<run_id>``) whose
counts the planner and the workers move with atomic ``ADD``s, so a run fanned out to many workers is
counted exactly as its groups finish (docs/api.md §6). ``finished_at`` is set by whoever completes it: the
planner when nothing is left in flight, else the worker whose group was the last one counted."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from agent_memory.basics.clock import iso
from agent_memory.storage.client import update_if
from agent_memory.storage.keys import RUN_PREFIX, RUNS_PK, run_sk

COUNTS = ("groups_planned", "groups_done", "groups_failed", "notes_consolidated", "notes_remaining")
# What the run's model calls cost, and how its groups were folded: sums kept as their own attributes.
TOKENS = {"input": "tokens_input", "output": "tokens_output"}
FOLDS = {kind: f"folds_{kind}" for kind in ("edits", "rewrite", "model_free", "unchanged")}
_MAX_LISTED_FAILURES = 100


class RunRecords:
    _client: Any
    _table: str

    def save_run(self, record: dict[str, Any]) -> None:
        """Write a run's record as it starts (or the whole record of a run that folded nothing)."""
        item = {
            "pk": {"S": RUNS_PK},
            "sk": {"S": run_sk(record["started_at"], record["run_id"])},
            "run_id": {"S": record["run_id"]},
            "started_at": {"S": record["started_at"]},
            "failures": {"L": [_failure(f["scope"], f["reason"]) for f in record.get("failures", [])]},
            **{name: {"N": str(record.get(name, 0))} for name in COUNTS},
            **{name: {"N": str(record.get("tokens", {}).get(key, 0))} for key, name in TOKENS.items()},
            **{name: {"N": str(record.get("folds", {}).get(key, 0))} for key, name in FOLDS.items()},
        }
        if record.get("finished_at"):
            item["finished_at"] = {"S": record["finished_at"]}
        self._client.put_item(TableName=self._table, Item=item)

    def list_failure(self, run: str, scope_key: str, reason: str) -> None:
        """Add a failure with its reason to the run's listing (the first hundred; the count has them all)."""
        update_if(
            self._client,
            TableName=self._table,
            Key={"pk": {"S": RUNS_PK}, "sk": {"S": run}},
            UpdateExpression="SET failures = list_append(if_not_exists(failures, :none), :one)",
            ConditionExpression="attribute_not_exists(failures) OR size(failures) < :max",
            ExpressionAttributeValues={
                ":none": {"L": []},
                ":one": {"L": [_failure(scope_key, reason)]},
                ":max": {"N": str(_MAX_LISTED_FAILURES)},
            },
        )

    def planned(
        self, run: str, *, groups: int, remaining: int, outcomes: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        """The planner is done: ``groups`` groups went out and ``remaining`` due notes were left for later.

        ``outcomes``: the planner folded the groups itself and knows how each ended, ``(done, failed)``. No
        worker can count any more, so the record is written whole with those counts (a group's own count
        may be missing from the store, its answer lost with storage failing, or be found there twice where
        an engine does not make retried writes idempotent), with one PutItem that needs no update to succeed.
        """
        if outcomes is not None:
            item = self._client.get_item(
                TableName=self._table, Key={"pk": {"S": RUNS_PK}, "sk": {"S": run}}, ConsistentRead=True
            )["Item"]
            record = _record(item)
            record.update(groups_planned=groups, notes_remaining=record["notes_remaining"] + remaining)
            record.update(groups_done=outcomes[0], groups_failed=outcomes[1])
            record["finished_at"] = iso(datetime.now(UTC))
            self.save_run(record)
            return {**record, "status": "finished"}
        answer = self._client.update_item(
            TableName=self._table,
            Key={"pk": {"S": RUNS_PK}, "sk": {"S": run}},
            UpdateExpression="SET groups_planned = :g, planned = :true ADD notes_remaining :r",
            ExpressionAttributeValues={":g": {"N": str(groups)}, ":true": {"BOOL": True}, ":r": {"N": str(remaining)}},
            ReturnValues="ALL_NEW",
        )
        return self.finish_if_complete(run, answer["Attributes"])

    def finish_if_complete(self, run: str, item: dict[str, Any] | None = None) -> dict[str, Any]:
        """Set ``finished_at`` once the plan is complete and every planned group is counted; the listing."""
        if item is None:
            item = self._client.get_item(
                TableName=self._table, Key={"pk": {"S": RUNS_PK}, "sk": {"S": run}}, ConsistentRead=True
            )["Item"]
        record = _record(item)
        complete = item.get("planned", {}).get("BOOL") and (
            record["groups_done"] + record["groups_failed"] >= record["groups_planned"]
        )
        if complete and record["finished_at"] is None:
            finished_at = iso(datetime.now(UTC))
            first = update_if(
                self._client,
                TableName=self._table,
                Key={"pk": {"S": RUNS_PK}, "sk": {"S": run}},
                UpdateExpression="SET finished_at = :at",
                ConditionExpression="attribute_not_exists(finished_at)",
                ExpressionAttributeValues={":at": {"S": finished_at}},
            )
            if not first:  # another worker finished it: list it as that one wrote it
                return self.finish_if_complete(run)
            record["finished_at"] = finished_at
        record["status"] = "finished" if record["finished_at"] else "running"
        return record

    def read_run(self, run: str) -> dict[str, Any]:
        """One run as listed (a strongly consistent read)."""
        item = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": RUNS_PK}, "sk": {"S": run}}, ConsistentRead=True
        )["Item"]
        record = _record(item)
        record["status"] = "finished" if record["finished_at"] else "running"
        return record

    def runs(self, limit: int) -> list[dict[str, Any]]:
        """The most recent runs, newest first, each with its status and counts so far."""
        answer = self._client.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :run)",
            ExpressionAttributeValues={":pk": {"S": RUNS_PK}, ":run": {"S": RUN_PREFIX}},
            ScanIndexForward=False,
            Limit=limit,
        )
        records = [_record(item) for item in answer["Items"]]
        for record in records:
            record["status"] = "finished" if record["finished_at"] else "running"
        return records


def _failure(scope_key: str, reason: str) -> dict[str, Any]:
    return {"M": {"scope": {"S": scope_key}, "reason": {"S": reason}}}


def _record(item: dict[str, Any]) -> dict[str, Any]:
    """The public shape of a run (docs/api.md §5 and §6); a run recorded before the fan-out is one JSON string."""
    if "record" in item:
        old: dict[str, Any] = json.loads(item["record"]["S"])
        planned = old.get("groups_done", 0) + old.get("groups_failed", 0)
        return {"groups_planned": planned, "tokens": dict.fromkeys(TOKENS, 0), "folds": dict.fromkeys(FOLDS, 0), **old}

    def number(name: str) -> int:
        return int(item.get(name, {}).get("N", "0"))

    return {
        "run_id": item["run_id"]["S"],
        **{name: number(name) for name in COUNTS},
        "tokens": {key: number(name) for key, name in TOKENS.items()},
        "folds": {key: number(name) for key, name in FOLDS.items()},
        "started_at": item["started_at"]["S"],
        "finished_at": item.get("finished_at", {}).get("S"),
        "failures": [
            {"scope": f["M"]["scope"]["S"], "reason": f["M"]["reason"]["S"]}
            for f in item.get("failures", {}).get("L", [])
        ],
    }
