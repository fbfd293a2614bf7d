"""``Idempotency-Key`` on the writes (docs/api.md §6 "Storage faults"): a retry is answered, not applied again.

A key is its caller's own: a record beside the scope's data, ``sk = idem#<route>#<caller>#<key>``, holds the
first call's answer for 24 hours (DynamoDB's TTL then removes it), so the same key from another member of a
workspace is another request. A call first claims the key with a conditional put; when it is done it stores
its answer (a success or a refusal the caller must see again: 4xx). A repeat of the key by the same caller,
for the same scope and route, gets that answer and writes nothing; with another body it is a 422.

A record written before records named their caller (``idem#<route>#<key>``) is still read for its 24 hours
after an upgrade: a request whose fingerprint it holds is the same caller's same request (every route's
fingerprinted request names its caller), answered as it was; one it does not hold runs as a new request.

A claim whose call failed before it knew the outcome (a 5xx) is left as a lease of ``LEASE_S``: a repeat
within it is a 503 (the first call may still be running); after it the call runs again. So the key makes a
retry safe after a lost *answer*; after a storage fault whose outcome is unknown, ``update_memory`` and the
dashboard should also pass the version they based the write on, which refuses a second application (409).

Why not Powertools' idempotency utility: it keys records on the event (or a JMESPath into it) and keeps
them in a table of its own layout; here the key must be the header, its caller *and* the scope the token
or the conversation binds (never the body's say), the record must sit in the scope's partition (erasure of
a scope takes it too), and a refusal (409, 422) must be replayed as the answer it was. That is the 100
lines below rather than a second table and a wrapper around the route.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agent_memory.basics.errors import MemoryServiceError, StorageUnavailable
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import Answer, ErrorBodyAnswer
from agent_memory.storage.client import DynamoDB, claim_record, live_record
from agent_memory.storage.keys import idempotency_sk, legacy_idempotency_sk

KEEP_S = 24 * 3600
LEASE_S = 30  # longer than a write route's timeout (29 s): a live call never loses its claim to a repeat


class KeyReused(MemoryServiceError, status=422, code="invalid_input"):
    """An ``Idempotency-Key`` sent again with another body."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A write's answer as it leaves and as it is stored for a replay: its status and JSON body."""

    status: int
    body: Any

    @classmethod
    def of(cls, status: int, shape: Answer) -> Reply:
        return cls(status, shape.json_body())


@dataclass(slots=True)
class Once:
    """A write under an ``Idempotency-Key``: the answer of an earlier call to give again, or this call's."""

    earlier: Reply | None = None
    reply: Reply | None = None

    @property
    def answer(self) -> Reply:
        answer = self.earlier or self.reply
        if answer is None:
            raise RuntimeError("the write set no reply")  # a route's bug, surfaced as a 500
        return answer


def fingerprint(body: object) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class IdempotencyStore:
    def __init__(self, client: Any, table_name: str) -> None:
        self._client = DynamoDB(client)
        self._table = table_name

    @contextmanager
    def once(self, scope: Scope, route: str, caller: str, key: str | None, request: object) -> Iterator[Once]:
        """One write under ``caller``'s ``key``: with an earlier answer to give (``Once.earlier``), the caller
        writes nothing; else it writes and sets ``Once.reply``, which is stored for a repeat, and so is a refusal
        it raises. ``request`` names the caller too (what ``fingerprint`` digests)."""
        if key is None:
            yield Once()
            return
        item_key = {"pk": {"S": scope.key}, "sk": {"S": idempotency_sk(route, caller, key)}}
        digest = fingerprint(request)
        earlier = self._claim(item_key, digest)
        if earlier is not None:
            yield Once(earlier=self._replay(earlier, digest))
            return
        try:
            replay = self._answered_before(scope, route, key, digest)
        except MemoryServiceError:
            self._release(item_key)  # nothing was written: a repeat once the earlier call is done asks again
            raise
        if replay is not None:
            self._store(item_key, replay)  # a repeat finds it under this key from now on
            yield Once(earlier=replay)
            return
        write = Once()
        try:
            yield write
        except MemoryServiceError as error:
            if error.status >= 500:
                raise  # the outcome may be unknown: the lease stays, a repeat after it runs again
            if error.code == "quota_exceeded":
                self._release(item_key)  # a refusal that passes with time: a repeat after it must run again
                raise
            body = ErrorBodyAnswer.of(error.code, error.message, error.details).json_body()
            self._store(item_key, Reply(error.status, body))
            raise
        self._store(item_key, write.answer)

    def _claim(self, item_key: dict[str, Any], digest: str) -> dict[str, Any] | None:
        item = {**item_key, "request": {"S": digest}}
        return claim_record(self._client, self._table, item, now_epoch=int(time.time()), lease_s=LEASE_S, keep_s=KEEP_S)

    def _answered_before(self, scope: Scope, route: str, key: str, digest: str) -> Reply | None:
        """The answer a record under the key format used before keys named their caller holds for this very request
        (its fingerprint), if any; one still in progress is a 503, as a repeat of a live claim is."""
        legacy = {"pk": {"S": scope.key}, "sk": {"S": legacy_idempotency_sk(route, key)}}
        item = live_record(self._client, self._table, legacy, now_epoch=int(time.time()))
        if item is None or item.get("request", {}).get("S") != digest:
            return None  # none, or another request (another caller's): this one runs
        return self._replay(item, digest)

    @staticmethod
    def _replay(item: dict[str, Any], digest: str) -> Reply:
        if item.get("request", {}).get("S") != digest:
            raise KeyReused(
                "this Idempotency-Key was used with another request; use a new key for a new request",
                details=[{"loc": ["header", "Idempotency-Key"], "msg": "reused", "type": "idempotency_key_reused"}],
            )
        if item.get("status", {}).get("S") != "done":
            raise StorageUnavailable(
                "a request with this Idempotency-Key is still in progress, or its outcome is unknown; retry later"
            )
        return Reply(int(item["answer_status"]["N"]), json.loads(item["answer"]["S"]))

    def _release(self, item_key: dict[str, Any]) -> None:
        """Give the key back: nothing was written, and the same request may succeed later. The claim's lease is
        ended rather than the record deleted (a lapsed claim is a free key to ``claim_record``), so a key asks for
        no more than the ``UpdateItem`` that storing its answer needs."""
        self._client.update_item(
            TableName=self._table,
            Key=item_key,
            UpdateExpression="SET lease_until = :lapsed",
            ExpressionAttributeValues={":lapsed": {"N": "0"}},
        )

    def _store(self, item_key: dict[str, Any], answer: Reply) -> None:
        self._client.update_item(
            TableName=self._table,
            Key=item_key,
            UpdateExpression="SET #status = :done, answer_status = :code, answer = :answer REMOVE lease_until",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                ":done": {"S": "done"},
                ":code": {"N": str(answer.status)},
                ":answer": {"S": json.dumps(answer.body, ensure_ascii=False)},
            },
        )
