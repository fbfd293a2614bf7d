"""How a request proves who sends it, as httpx's own ``Auth`` objects: SigV4 for AWS, a bearer token for the
dashboard's routes, nothing for the local stack. A client picks one (:func:`memory_auth`) and passes it as
httpx's ``auth=``; the transport never looks at authentication.

SigV4 is botocore's own signer (``botocore.auth.SigV4Auth``), not a reading of AWS's algorithm, and the
credentials are botocore's: the standard chain by default (environment, profile, SSO, web identity,
container and instance roles), read again for each request so that rotating credentials keep working.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Literal
from urllib.parse import urlsplit

import botocore.auth
import httpx
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, ReadOnlyCredentials
from botocore.exceptions import NoCredentialsError

from agent_memory_client.flush import is_loopback

Signing = Literal["auto", "sigv4", "none"]
Token = str | Callable[[], str]
SERVICE = "execute-api"
# httpx's own defaults: they describe the connection, not the request, and a proxy may rewrite them. What the
# request means (host, content type, Idempotency-Key, the body's hash, the query) is always signed.
UNSIGNED = frozenset({"accept", "accept-encoding", "content-length"})
ADDED_BY_SIGNING = ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")


class SigV4Auth(httpx.Auth):
    """AWS Signature Version 4 for ``service`` in ``region``, signed by botocore.

    ``credentials``: any botocore ``Credentials`` (``boto3.Session().get_credentials()``, refreshable ones
    included); None means the standard chain, looked up at the first request."""

    requires_request_body = True  # the body's SHA-256 is part of the signature

    def __init__(self, region: str, credentials: Credentials | None = None, *, service: str = SERVICE) -> None:
        self.region = region
        self.service = service
        self._credentials = credentials

    def frozen_credentials(self) -> ReadOnlyCredentials:
        """This request's keys: refreshable credentials refresh here when they are about to expire."""
        if self._credentials is None:
            from botocore.session import get_session  # 140 ms to import: only for the default chain

            self._credentials = get_session().get_credentials()
            if self._credentials is None:
                raise NoCredentialsError()
        return self._credentials.get_frozen_credentials()

    def sign(self, request: httpx.Request, credentials: ReadOnlyCredentials) -> None:
        """Add the signature's headers to ``request`` as it will be sent (its URL, headers and body)."""
        headers = {name: value for name, value in request.headers.items() if name not in UNSIGNED}
        signed = AWSRequest(method=request.method, url=str(request.url), headers=headers, data=request.content)
        botocore.auth.SigV4Auth(credentials, self.service, self.region).add_auth(signed)
        request.headers.update({name: signed.headers[name] for name in ADDED_BY_SIGNING if name in signed.headers})

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        self.sign(request, self.frozen_credentials())
        yield request

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """As :meth:`auth_flow`; a refresh of the credentials may call AWS, so it waits off the event loop."""
        await request.aread()
        self.sign(request, await asyncio.to_thread(self.frozen_credentials))
        yield request


class BearerAuth(httpx.Auth):
    """``Authorization: Bearer <token>`` for the dashboard's routes; a callable ``token`` is called for each
    request, so that a token refreshed elsewhere is the one sent."""

    def __init__(self, token: Token) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._token() if callable(self._token) else self._token
        request.headers["authorization"] = f"Bearer {token}"
        yield request


def region_of(url: str) -> str | None:
    """The region in an ``execute-api`` hostname: ``abc123.execute-api.eu-west-1.amazonaws.com``."""
    labels = (urlsplit(url).hostname or "").split(".")
    if len(labels) >= 5 and labels[1] == SERVICE and labels[-2] == "amazonaws":
        return labels[2]
    return None


def memory_auth(
    endpoint: str, signing: Signing, region: str | None, credentials: Credentials | None
) -> SigV4Auth | None:
    """The tools' and context's authentication: with ``signing="auto"``, SigV4 for an AWS hostname and none
    for anything else (the local stack); the region from the argument, the hostname, else the default
    chain's (``AWS_REGION``, the profile)."""
    if signing == "auto":
        host = urlsplit(endpoint).hostname or ""
        signing = "sigv4" if host.endswith(".amazonaws.com") and not is_loopback(endpoint) else "none"
    if signing == "none":
        return None
    region = region or region_of(endpoint)
    if region is None:
        from botocore.session import get_session

        region = get_session().get_config_variable("region")
    if region is None:
        raise ValueError("SigV4 needs a region: pass region= or set AWS_REGION")
    return SigV4Auth(region, credentials)
