"""The records of what each turn was shown (docs/api.md §6 ``injections``): per ``/v1/context`` call, the
document version and the note ids it injected, for which thread, kept ``MEMORY_INJECTION_TTL_DAYS`` (DynamoDB's
TTL). When a turn writes its record, and how long it waits for it, is the turn's part (``people.injections``).

Its client is bounded tightly (0.5 s to connect, 1 s to read, two attempts): a record that cannot be written
within that is counted in ``InjectionsDropped`` and logged with its scope, and the turn's answer says so
(``degraded`` gains ``injection_record``); a turn is never failed by its record. The put is the same request
on every attempt (its sort key is made once), so a retry after a lost answer writes the same item again,
never a second one.

Items: ``pk`` = the scope, ``sk = inj#<at>#<ns><random>`` (newest first is one descending Query).
"""

from __future__ import annotations

import base64
import binascii
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_memory.basics.clock import iso
from agent_memory.basics.errors import InvalidInput
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import InjectionEntryAnswer, InjectionsAnswer
from agent_memory.storage.client import DynamoDB, query_pages
from agent_memory.storage.keys import INJECTION_PREFIX

# The most a /injections call reads: pages of records, and records a page (about 100 KB of them).
READ_PAGES = 4
READ_PAGE_ITEMS = 500


@dataclass(frozen=True, slots=True)
class Injection:
    scope: Scope
    at: datetime
    thread_id: str
    document_version: int
    note_ids: list[str]
    # Orders records of the same millisecond (and of a frozen clock) as they were made.
    made_ns: int = field(default_factory=time.time_ns)
    user_id: str | None = None  # whose turn: never listed, it lets a member's erase take their turns


class InjectionRecorder:
    def __init__(self, client: Any, table_name: str, *, ttl_days: int) -> None:
        self._client = DynamoDB(client)
        self._table = table_name
        self._ttl_s = ttl_days * 86_400

    def record(self, injection: Injection) -> bool:
        """Write the record now; False (counted and logged, never raised) when it could not be written."""
        try:
            self._client.put_item(TableName=self._table, Item=self._item(injection))
            return True
        except Exception:  # noqa: BLE001 - the turn is answered whatever happens to its record
            logger.exception("could not record what the turn was shown", extra={"scope": injection.scope.kind})
            metrics.add_metric(name="InjectionsDropped", unit="Count", value=1)
            return False

    def _item(self, injection: Injection) -> dict[str, Any]:
        return {
            "pk": {"S": injection.scope.key},
            "sk": {"S": f"{INJECTION_PREFIX}{iso(injection.at)}#{injection.made_ns:020d}{uuid.uuid4().hex[:6]}"},
            "at": {"S": iso(injection.at)},
            "thread_id": {"S": injection.thread_id},
            "document_version": {"N": str(injection.document_version)},
            "note_ids": {"L": [{"S": one} for one in injection.note_ids]},
            "expires_at": {"N": str(int(injection.at.timestamp()) + self._ttl_s)},
            **({"user_id": {"S": injection.user_id}} if injection.user_id else {}),
        }


def list_injections(
    client: Any, table: str, scope: Scope, *, thread_id: str | None, limit: int, cursor: str | None, now_epoch: int
) -> InjectionsAnswer:
    """Newest first, ``limit`` of them, of one thread when ``thread_id`` is given; expired ones left out
    (DynamoDB's TTL deletes within days, not at once).

    The work per call is bounded: at most ``READ_PAGES`` Query pages of ``READ_PAGE_ITEMS`` records. A
    thread whose records are rare (or absent) in a long history is answered with what those pages held,
    possibly nothing, and a ``next_cursor`` to read on from; null only once the history is read to its end."""
    request: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :inj)",
        "ExpressionAttributeValues": {
            ":pk": {"S": scope.key},
            ":inj": {"S": INJECTION_PREFIX},
            ":now": {"N": str(now_epoch)},
        },
        "FilterExpression": "expires_at > :now",
        "ScanIndexForward": False,
        "Limit": READ_PAGE_ITEMS if thread_id is not None else max(limit, 50),
    }
    if thread_id is not None:
        request["FilterExpression"] += " AND thread_id = :thread"
        request["ExpressionAttributeValues"][":thread"] = {"S": thread_id}
    if cursor is not None:
        request["ExclusiveStartKey"] = {"pk": {"S": scope.key}, "sk": {"S": _parse_cursor(cursor)}}
    found: list[dict[str, Any]] = []
    read_up_to: str | None = None  # the last record read when the page bound stopped the reading
    for number, page in enumerate(query_pages(client, request), start=1):
        found.extend(page["Items"][: limit - len(found)])
        if len(found) == limit:
            break
        if number == READ_PAGES and "LastEvaluatedKey" in page:
            read_up_to = page["LastEvaluatedKey"]["sk"]["S"]
            break
    more = len(found) == limit
    last = found[-1]["sk"]["S"] if more else read_up_to
    return InjectionsAnswer(
        injections=[
            InjectionEntryAnswer(
                at=item["at"]["S"],
                thread_id=item["thread_id"]["S"],
                document_version=int(item["document_version"]["N"]),
                note_ids=[one["S"] for one in item["note_ids"]["L"]],
            )
            for item in found
        ],
        next_cursor=base64.urlsafe_b64encode(last.encode()).decode() if last is not None else None,
    )


def _parse_cursor(cursor: str) -> str:
    try:
        sk = base64.urlsafe_b64decode(cursor.encode()).decode()
    except (ValueError, binascii.Error, UnicodeDecodeError):
        sk = ""
    if not sk.startswith(INJECTION_PREFIX):
        raise InvalidInput(
            "`cursor` must be the `next_cursor` of a previous answer",
            details=[{"loc": ["query", "cursor"], "msg": "invalid cursor", "type": "cursor"}],
        )
    return sk
