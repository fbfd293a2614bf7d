"""One HTTP exchange with the service: signing, timeouts, bounded retries with jitter, typed errors.

httpx carries the requests (pooled connections, a timeout on every phase, and a transport a test can
swap); requests to AWS are SigV4-signed for ``execute-api`` with the standard credential chain, requests
to the local stack are not signed, and the management routes carry a bearer JWT instead.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict
from urllib.parse import quote, urlsplit

import httpx

from agent_memory_client import sigv4
from agent_memory_client.errors import MemoryTransportError, api_error
from agent_memory_client.flush import is_loopback

Signing = Literal["auto", "sigv4", "none"]
RETRY_STATUSES = frozenset({429, 503})
USER_AGENT = "agent-memory-client/0.1"


class TransportOptions(TypedDict, total=False):
    """``Transport``'s keyword arguments, as a client passes them through (each optional, ``Transport``'s
    defaults apply)."""

    signing: Signing
    region: str | None
    credentials: sigv4.CredentialSource | None
    timeout_s: float
    retry: RetryPolicy | None
    http: httpx.Client | None


@dataclass
class RetryPolicy:
    """At most ``max_attempts`` tries on 429, 503 and lost connections; full-jitter exponential backoff.
    A ``Retry-After`` longer than ``max_delay_s`` (a daily quota until midnight) is not waited for."""

    max_attempts: int = 3
    base_delay_s: float = 0.2
    max_delay_s: float = 5.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def delay(self, attempt: int, retry_after_s: float | None) -> float | None:
        """Seconds to wait before try ``attempt + 1``, or None to give up."""
        if attempt >= self.max_attempts:
            return None
        if retry_after_s is not None and retry_after_s > self.max_delay_s:
            return None
        jitter = random.uniform(0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))  # noqa: S311
        return max(retry_after_s or 0.0, jitter)


def _retry_after(headers: httpx.Headers) -> float | None:
    try:
        return float(headers["retry-after"]) if "retry-after" in headers else None
    except ValueError:
        return None


def new_idempotency_key() -> str:
    """A fresh key (the id pattern of docs/api.md §3), the same for every retry of one write."""
    return uuid.uuid4().hex


class Transport:
    def __init__(
        self,
        endpoint: str,
        *,
        signing: Signing = "auto",
        region: str | None = None,
        credentials: sigv4.CredentialSource | None = None,
        timeout_s: float = 10.0,
        retry: RetryPolicy | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.endpoint = endpoint.rstrip("/")
        if signing == "auto":
            host = urlsplit(self.endpoint).hostname or ""
            signing = "sigv4" if host.endswith(".amazonaws.com") and not is_loopback(self.endpoint) else "none"
        self.signing = signing
        self._region = region
        self._credentials = credentials
        self.retry = retry or RetryPolicy()
        self._http = http or httpx.Client(timeout=timeout_s, headers={"user-agent": USER_AGENT}, trust_env=False)

    def close(self) -> None:
        self._http.close()

    def _signing_parameters(self) -> tuple[str, sigv4.CredentialSource]:
        if self._region is None:
            self._region = sigv4.region_of(self.endpoint) or sigv4.default_region()
            if self._region is None:
                raise ValueError("SigV4 needs a region: pass region= or set AWS_REGION")
        if self._credentials is None:
            self._credentials = sigv4.default_credentials()
        return self._region, self._credentials

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, object] | None = None,
        bearer: str | None = None,
        idempotency_key: str | None = None,
    ) -> Any:
        """Send, retrying 429/503 and lost connections; answer the JSON body (None for a 204) or raise."""
        query = sigv4.query_string(params or {})
        url = self.endpoint + quote(path, safe="/@-._~") + (f"?{query}" if query else "")
        content = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()
        headers = {"content-type": "application/json"} if body is not None else {}
        if idempotency_key is not None:
            headers["idempotency-key"] = idempotency_key
        attempt = 0
        while True:
            attempt += 1
            sent = dict(headers)
            if bearer is not None:
                sent["authorization"] = f"Bearer {bearer}"
            elif self.signing == "sigv4":
                region, credentials = self._signing_parameters()
                sent.update(sigv4.sign(method, url, headers, content, credentials=credentials(), region=region))
            try:
                answer = self._http.request(method, url, content=content or None, headers=sent)
            except httpx.TransportError as error:
                wait = self.retry.delay(attempt, None)
                if wait is None:
                    raise MemoryTransportError(f"{method} {path}: {type(error).__name__}: {error}") from error
                self.retry.sleep(wait)
                continue
            if answer.status_code < 300:
                return answer.json() if answer.content else None
            retry_after = _retry_after(answer.headers)
            if answer.status_code in RETRY_STATUSES:
                wait = self.retry.delay(attempt, retry_after)
                if wait is not None:
                    self.retry.sleep(wait)
                    continue
            try:
                payload: Any = answer.json()
            except ValueError:
                payload = answer.text
            raise api_error(answer.status_code, payload, retry_after)
