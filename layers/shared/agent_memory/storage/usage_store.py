"""Per-scope quotas (docs/api.md §6 "Quotas"): the characters a scope stores, kept in one counter item.

- ``usage`` (sort key) holds ``chars``: every kept version of the document (its history included, the
  newest ``document.HISTORY_VERSIONS``) plus every note's text length. A note adds its length, and a
  document version its own length less that of the version it pushes out of the history, with a
  conditional ``ADD`` inside the write's own transaction (no extra request for a note); a deleted note gives
  its characters back, an erase all of them. Over the quota, the write is refused whole, never cut.
- Notes per day need no item of their own: the day's item (``day#<day>``) holds the position counter and
  ``live``, the day's notes that still exist (written, less deleted or erased: an erase gives its notes of
  the day back), and in a team scope one counter per member (``by#<user>``), so that no member can use up
  the team's day; the atomic ``ADD`` that takes a position is conditional on both quotas
  (``storage.note_store``). A day item written before ``live`` existed counts by its position counter.
  A note whose transaction is cancelled gives its position back (``give_back_position``), so that a failed
  write counts neither in ``notes_today`` nor against the quota; one whose every answer was lost is settled by
  ``storage.lost_note_writes``, which lists its place under ``abandoned`` on this item when it was not written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.basics.errors import NotesQuotaExceeded, StorageQuotaExceeded, StorageUnavailable
from agent_memory.basics.observability import logger
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, condition_failed
from agent_memory.storage.keys import USAGE_SK, day_sk


@dataclass(frozen=True, slots=True)
class Quota:
    notes_per_day: int
    chars: int
    notes_per_member_day: int | None = None  # in a team scope, each member's share of the day


def member_counter(user_id: str) -> str:
    """The day item's attribute counting one member's notes of that day (team scopes)."""
    return f"by#{user_id}"


def seconds_to_midnight(now: datetime) -> int:
    """Seconds from ``now`` (UTC) to the next UTC midnight, at least 1."""
    midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((midnight - now).total_seconds() + 0.999))


def notes_quota_error(quota: Quota, now: datetime, *, member: str | None = None) -> NotesQuotaExceeded:
    if member is not None:
        return NotesQuotaExceeded(
            f"quota_exceeded: you have written your {quota.notes_per_member_day} notes for today in this team's "
            "memory (MEMORY_QUOTA_NOTES_PER_MEMBER_DAY); nothing was written, try again after midnight UTC",
            retry_after=seconds_to_midnight(now),
        )
    return NotesQuotaExceeded(
        f"quota_exceeded: this memory has written its {quota.notes_per_day} notes for today "
        "(MEMORY_QUOTA_NOTES_PER_DAY); nothing was written, try again after midnight UTC",
        retry_after=seconds_to_midnight(now),
    )


def chars_quota_error(quota: Quota, adding: int) -> StorageQuotaExceeded:
    return StorageQuotaExceeded(
        f"quota_exceeded: storing {adding:,} more characters would take this memory over its quota of "
        f"{quota.chars:,} characters (MEMORY_QUOTA_CHARS); nothing was written. Delete notes or shorten the document"
    )


@dataclass(frozen=True, slots=True)
class CharsChange:
    """How a write moves the scope's characters counter: by ``delta``, held to ``quota`` when it grows (None: not
    held). A note's append and a version's save build its transaction item (``chars_change_item``)."""

    delta: int
    quota: Quota | None


def version_change(delta: int, quota: Quota | None, *, reason: str) -> CharsChange:
    """A document version's change of the counter: held to the quota, but for a consolidation's, which moves notes'
    text into the document (refusing it would leave the scope due every night)."""
    return CharsChange(delta, quota if reason != "consolidation" else None)


def chars_change_item(table: str, scope: Scope, change: CharsChange) -> dict[str, Any]:
    """The transaction item moving the scope's counter by ``change.delta``; when it grows within a quota, on
    condition the counter stays within it (its failure is the quota's refusal, ``chars_quota_error``). A change
    larger than the whole quota is refused here, before any request."""
    update: dict[str, Any] = {
        "TableName": table,
        "Key": {"pk": {"S": scope.key}, "sk": {"S": USAGE_SK}},
        "UpdateExpression": "ADD chars :n",
        "ExpressionAttributeValues": {":n": {"N": str(change.delta)}},
    }
    quota = change.quota
    if quota is not None and change.delta > 0:
        if change.delta > quota.chars:
            raise chars_quota_error(quota, change.delta)
        update["ConditionExpression"] = "attribute_not_exists(chars) OR chars <= :max"
        update["ExpressionAttributeValues"][":max"] = {"N": str(quota.chars - change.delta)}
    return {"Update": update}


def _once(once: str | None) -> tuple[str, str | None, dict[str, Any]]:
    """A give-back that applies once whatever is sent again (an erase's page: ``ScopeItems.erase_page``): it
    records its id on the counter's item (``given_back``; only the last is kept, as the day's ``last_take``), on
    condition the item does not hold it already, so a request sent again after its answer was lost is refused
    rather than give back twice. The clause to append to the update, its condition and its values."""
    if once is None:
        return "", None, {}
    condition = "attribute_not_exists(given_back) OR given_back <> :once"
    return " SET given_back = :once", condition, {":once": {"S": once}}


class UsageStore:
    def __init__(self, client: Any, table_name: str, quota: Quota | None) -> None:
        self._client = DynamoDB(client)
        self._table = table_name
        self.quota = quota

    def _key(self, scope: Scope) -> dict[str, Any]:
        return {"pk": {"S": scope.key}, "sk": {"S": USAGE_SK}}

    def give_back(self, scope: Scope, chars: int, *, once: str | None = None) -> None:
        """Count ``chars`` fewer (a note deleted, or a reservation whose write failed). Best effort: if this
        fails, the counter over-counts (never under-counts) until the scope is erased. ``once``: see ``_once``."""
        self.add(scope, -chars, once=once)

    def add(self, scope: Scope, chars: int, *, once: str | None = None) -> None:
        """Move the counter by ``chars`` without a quota check (best effort, as ``give_back``)."""
        if not chars:
            return
        set_once, condition, once_values = _once(once)
        try:
            self._client.update_item(
                TableName=self._table,
                Key=self._key(scope),
                UpdateExpression="ADD chars :n" + set_once,
                ExpressionAttributeValues={":n": {"N": str(chars)}, **once_values},
                **({"ConditionExpression": condition} if condition else {}),
            )
        except Exception as error:  # noqa: BLE001 - the caller's own outcome matters more than the counter
            if isinstance(error, ClientError) and condition_failed(error):
                return  # this very change, sent again after its answer was lost: applied once
            logger.warning("could not give characters back to the usage counter", extra={"scope": scope.kind})

    def day_item(self, scope: Scope, day: str) -> dict[str, Any]:
        """The day's item (position counter, ``live``, members' counters), read consistently; {} if none."""
        answer = self._client.get_item(
            TableName=self._table, Key={"pk": {"S": scope.key}, "sk": {"S": day_sk(day)}}, ConsistentRead=True
        )
        item: dict[str, Any] = answer.get("Item") or {}
        return item

    def own_take(self, scope: Scope, day: str, take_id: str) -> int | None:
        """After a position take whose every answer was lost: the position it took, if the day's counter holds it
        as its last take; None if it did not apply, another writer took one since, or this read fails too (then
        the note is not written and may still count: over, never under)."""
        try:
            item = self.day_item(scope, day)
        except StorageUnavailable:
            return None
        return int(item["next_position"]["N"]) if item.get("last_take", {}).get("S") == take_id else None

    def member_full(self, scope: Scope, day: str, member: str | None) -> bool:
        """Whether a refusal was the member's share of the day (read only on a refusal)."""
        if member is None or self.quota is None or self.quota.notes_per_member_day is None:
            return False
        counted = self.day_item(scope, day).get(member_counter(member), {}).get("N", "0")
        return int(counted) >= self.quota.notes_per_member_day

    def give_back_notes(
        self, scope: Scope, day: str, count: int, authors: dict[str, int] | None = None, *, once: str | None = None
    ) -> None:
        """Notes of ``day`` deleted or erased: they no longer count against that day's quotas (``live`` and, in a
        team scope, each author's counter). Only on a day item that counts ``live``; best effort. ``once``: see
        ``_once``."""
        if not count:
            return
        names = {f"#m{i}": member_counter(user) for i, user in enumerate(authors or {})}
        values: dict[str, Any] = {":n": {"N": str(-count)}}
        adds = ["live :n"]
        for i, (name, user) in enumerate(zip(names, authors or {}, strict=True)):
            values[f":m{i}"] = {"N": str(-(authors or {})[user])}
            adds.append(f"{name} :m{i}")
        set_once, condition, once_values = _once(once)
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": day_sk(day)}},
                UpdateExpression="ADD " + ", ".join(adds) + set_once,
                ConditionExpression="attribute_exists(live)" + (f" AND ({condition})" if condition else ""),
                ExpressionAttributeValues={**values, **once_values},
                **({"ExpressionAttributeNames": names} if names else {}),
            )
        except Exception:  # noqa: BLE001 - a day that predates ``live``, or a fault: the quota stays as it was
            logger.info("the day's notes were not given back", extra={"scope": scope.kind})

    def give_back_note(self, scope: Scope, day: str, item: dict[str, Any], *, once: str) -> None:
        """A deleted note's characters and its day's counts (in a team scope, its author's too), given back once."""
        self.give_back(scope, len(item.get("text", {}).get("S", "")), once=once)
        author = item.get("origin_user_id", {}).get("S")
        self.give_back_notes(scope, day, 1, {author: 1} if scope.kind == "team" and author else None, once=once)

    def notes_on(self, scope: Scope, day: str) -> int:
        """How many notes of ``day`` count against its quota: those that still exist (``live``; the position
        counter on a day item that predates it)."""
        item = self.day_item(scope, day)
        return int((item.get("live") or item.get("next_position") or {"N": "0"})["N"])

    def give_back_position(self, scope: Scope, day: str, position: int, member: str | None = None) -> None:
        """Undo the day's position counter for a note that was not written, when no later writer has taken a
        position since (then the counter stays: taking a position back under it would collide with theirs, so
        under concurrent writes a failed note may still count, never the other way round). Best effort."""
        try:
            self._client.update_item(
                TableName=self._table,
                Key={"pk": {"S": scope.key}, "sk": {"S": day_sk(day)}},
                UpdateExpression="ADD next_position :minus, live :minus" + (", #member :minus" if member else ""),
                ConditionExpression="next_position = :taken",
                ExpressionAttributeValues={":minus": {"N": "-1"}, ":taken": {"N": str(position)}},
                **({"ExpressionAttributeNames": {"#member": member_counter(member)}} if member else {}),
            )
        except Exception:  # noqa: BLE001 - the write's own failure is what the caller must hear
            logger.info("the day's position was not given back", extra={"scope": scope.kind})

    def refusal(self, adding: int) -> StorageQuotaExceeded:
        return chars_quota_error(self.quota or Quota(0, 0), adding)

    def chars(self, scope: Scope) -> int:
        item = self._client.get_item(TableName=self._table, Key=self._key(scope)).get("Item")
        return max(0, int(item["chars"]["N"])) if item and "chars" in item else 0
