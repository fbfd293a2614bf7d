"""What each turn was shown (docs/api.md §6 ``injections``): per ``/v1/context`` call, the document version
and the note ids it injected, for which thread, kept ``MEMORY_INJECTION_TTL_DAYS`` (DynamoDB's TTL).

The record is off the per-turn path's latency: ``record`` only puts the record on an in-process queue (a
few microseconds) and a background thread writes the queue in batches (BatchWriteItem of what arrived
within a second, at most 25) with
tight client bounds. The turn never waits for it, and a failed write never fails a turn. What this costs:
in Lambda the thread runs while the sandbox is not frozen, i.e. during later invocations as well; a record
still queued when a sandbox is recycled is lost (counted in ``InjectionsDropped`` when the queue is full or
a write fails). The record is an audit aid, not a ledger.

Items: ``pk`` = the scope, ``sk = inj#<at>#<ns><random>`` (newest first is one descending Query).
"""

from __future__ import annotations

import base64
import binascii
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_memory.basics.clock import iso
from agent_memory.basics.errors import InvalidInput
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import InjectionEntry, Injections
from agent_memory.storage.client import DynamoDB, query_pages
from agent_memory.storage.keys import INJECTION_PREFIX

_QUEUE_MAX = 10_000
_BATCH = 25
_LINGER_S = 1.0
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
        self._queue: queue.Queue[Injection] = queue.Queue(maxsize=_QUEUE_MAX)
        self._writer: threading.Thread | None = None
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()

    def record(self, injection: Injection) -> None:
        """Queue the record and return at once; the writer thread stores it."""
        try:
            self._idle.clear()
            self._queue.put_nowait(injection)
        except queue.Full:
            metrics.add_metric(name="InjectionsDropped", unit="Count", value=1)
            return
        if self._writer is None or not self._writer.is_alive():
            with self._lock:
                if self._writer is None or not self._writer.is_alive():
                    self._writer = threading.Thread(target=self._write_forever, name="injections", daemon=True)
                    self._writer.start()

    def wait(self, timeout_s: float = 5.0) -> bool:
        """Until every queued record is written (tests, the bench, and a process about to exit)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._queue.empty() and self._idle.wait(timeout=0.01) and self._queue.empty():
                return True
        return False

    def _write_forever(self) -> None:
        while True:
            batch = [self._queue.get()]
            until = time.monotonic() + _LINGER_S  # gather the turns of the next moments: one request for many
            while len(batch) < _BATCH and (left := until - time.monotonic()) > 0:
                try:
                    batch.append(self._queue.get(timeout=left))
                except queue.Empty:
                    break
            try:
                self._write(batch)
            except Exception:  # noqa: BLE001 - a record is best effort; the turn was served long ago
                logger.exception("could not record what turns were shown", extra={"records": len(batch)})
                metrics.add_metric(name="InjectionsDropped", unit="Count", value=len(batch))
            if self._queue.empty():
                self._idle.set()

    def _write(self, batch: list[Injection]) -> None:
        requests = [{"PutRequest": {"Item": self._item(injection)}} for injection in batch]
        request: dict[str, Any] = {self._table: requests}
        for attempt in range(3):
            if attempt:
                time.sleep(0.05 * 2**attempt)
            request = self._client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
            if not request:
                return
        raise RuntimeError(f"{len(request[self._table])} injection records left unprocessed")

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
) -> Injections:
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
    return Injections(
        injections=[
            InjectionEntry(
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
