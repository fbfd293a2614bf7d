"""One call of the API and everything around its send but the send itself: the request of each try, whether
to try again, the answer or the typed error.

The blocking and the async clients share all of it, so they cannot drift: a :class:`Call` is what a client
method builds, an :class:`Exchange` is that call's tries, and ``transport.py`` only sends each try's
request on ``httpx.Client`` or ``httpx.AsyncClient`` and waits as the exchange says.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from agent_memory_client.errors import MemoryTransportError, api_error

T = TypeVar("T")
RETRY_STATUSES = frozenset({429, 503})


def _as_served(answer: Any) -> Any:
    return answer


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request of the API before any send; ``answer`` turns the JSON body (None for a 204) into what the
    method returns."""

    method: str
    path: str
    params: Mapping[str, object] = field(default_factory=dict)
    body: Any = None
    idempotency_key: str | None = None
    answer: Callable[[Any], T] = _as_served


@dataclass(frozen=True)
class Blocking(Generic[T]):
    """Work that is not an HTTP request and blocks (botocore's Lambda Invoke, for the flush): a blocking client
    runs it, an async client awaits it on a worker thread."""

    run: Callable[[], T]


@dataclass
class RetryPolicy:
    """At most ``max_attempts`` tries on 429, 503 and lost connections; full-jitter exponential backoff.
    A ``Retry-After`` longer than ``max_delay_s`` (a daily quota until midnight) is not waited for.

    ``sleep`` waits in the blocking clients, ``async_sleep`` in the async ones (asyncio's, which never
    holds up the event loop)."""

    max_attempts: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 5.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    async_sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)

    def delay(self, attempt: int, retry_after_s: float | None) -> float | None:
        """Seconds to wait before try ``attempt + 1``, or None to give up."""
        if attempt >= self.max_attempts:
            return None
        if retry_after_s is not None and retry_after_s > self.max_delay_s:
            return None
        jitter = random.uniform(0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))  # noqa: S311
        return max(retry_after_s or 0.0, jitter)


def new_idempotency_key() -> str:
    """A fresh key (the id pattern of docs/api.md §3), the same for every retry of one write."""
    return uuid.uuid4().hex


def query_string(params: Mapping[str, object]) -> str:
    """``params`` (None values left out) percent-encoded as RFC 3986 and SigV4 want them, sorted.

    Not httpx's ``params=``: it writes a space as ``+``, which API Gateway reads back as a space and
    encodes as ``%20`` when it checks a signature, so a signed query with a space would never verify."""
    items = sorted((str(k), str(v)) for k, v in params.items() if v is not None)
    return "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in items)


def _retry_after(headers: httpx.Headers) -> float | None:
    try:
        return float(headers["retry-after"]) if "retry-after" in headers else None
    except ValueError:
        return None


def _payload(response: httpx.Response) -> Any:
    """An error answer's body: JSON, or the text a gateway answered."""
    try:
        return response.json()
    except ValueError:
        return response.text


class Exchange(Generic[T]):
    """The tries of one :class:`Call`: build a try's :meth:`request`, send it, hand what came back to
    :meth:`settle`, and wait the seconds it answers, until it answers None (``answer`` holds the result)
    or raises. Every try of a write carries the same Idempotency-Key."""

    answer: T

    def __init__(self, endpoint: str, call: Call[T], retry: RetryPolicy) -> None:
        query = query_string(call.params)
        self.url = endpoint + quote(call.path, safe="/@-._~") + (f"?{query}" if query else "")
        self.content = None if call.body is None else json.dumps(call.body, ensure_ascii=False).encode()
        self.headers = {"content-type": "application/json"} if call.body is not None else {}
        if call.idempotency_key is not None:
            self.headers["idempotency-key"] = call.idempotency_key
        self.call = call
        self.retry = retry
        self.attempt = 0

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        """The next try's request, with the client's defaults (its timeout, its headers)."""
        self.attempt += 1
        return http.build_request(self.call.method, self.url, content=self.content, headers=self.headers)

    def settle(self, outcome: httpx.Response | httpx.TransportError) -> float | None:
        """Seconds to wait before the next try; None once ``answer`` is set; the typed error when the service
        refused or no try is left."""
        where = f"{self.call.method} {self.call.path}"
        if isinstance(outcome, httpx.TransportError):
            wait = self.retry.delay(self.attempt, None)
            if wait is None:
                raise MemoryTransportError(f"{where}: {type(outcome).__name__}: {outcome}") from outcome
            return wait
        if outcome.status_code < 300:
            self.answer = self.call.answer(outcome.json() if outcome.content else None)
            return None
        retry_after = _retry_after(outcome.headers)
        if outcome.status_code in RETRY_STATUSES and (wait := self.retry.delay(self.attempt, retry_after)) is not None:
            return wait
        raise api_error(outcome.status_code, _payload(outcome), retry_after)
