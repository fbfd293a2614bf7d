"""AWS Signature Version 4 for ``execute-api``, in the standard library (hmac, hashlib).

The tests check every signature against botocore's own ``SigV4Auth`` on fixed requests (known
credentials, known time), so this stays AWS's algorithm, not our reading of it. The credentials come from
botocore's standard chain (:func:`default_credentials`): environment, profile, SSO, web identity,
container and instance roles, refreshed when they expire.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "execute-api"


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str
    token: str | None = None


CredentialSource = Callable[[], Credentials]


def default_credentials(session: Any = None) -> CredentialSource:
    """The standard AWS credential chain (botocore's), read again before each request so that rotating
    credentials (an instance role, SSO) keep working."""
    from botocore.session import get_session

    botocore_session = session or get_session()

    def _current() -> Credentials:
        resolved = botocore_session.get_credentials()
        if resolved is None:
            raise RuntimeError("no AWS credentials found in the standard chain (environment, profile, role)")
        frozen = resolved.get_frozen_credentials()
        return Credentials(frozen.access_key, frozen.secret_key, frozen.token)

    return _current


def default_region(session: Any = None) -> str | None:
    from botocore.session import get_session

    region: str | None = (session or get_session()).get_config_variable("region")
    return region


def region_of(url: str) -> str | None:
    """The region in an ``execute-api`` hostname: ``abc123.execute-api.eu-west-1.amazonaws.com``."""
    labels = (urlsplit(url).hostname or "").split(".")
    if len(labels) >= 5 and labels[1] == SERVICE and labels[-2] == "amazonaws":
        return labels[2]
    return None


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _canonical_query(query: str) -> str:
    pairs = [pair.partition("=") for pair in query.split("&") if pair]
    return "&".join(f"{key}={value}" for key, _, value in sorted(pairs))


def sign(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    credentials: Credentials,
    region: str,
    service: str = SERVICE,
    now: datetime | None = None,
) -> dict[str, str]:
    """The headers to add to a request: ``X-Amz-Date``, ``X-Amz-Security-Token`` (temporary credentials)
    and ``Authorization``. Every header given is signed; send the request exactly as signed (``url``'s path
    and query already percent-encoded, RFC 3986, which :func:`query_string` produces)."""
    instant = (now or datetime.now(UTC)).astimezone(UTC)
    amz_date, day = instant.strftime("%Y%m%dT%H%M%SZ"), instant.strftime("%Y%m%d")
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port and not (
        (parts.scheme == "https" and parts.port == 443) or (parts.scheme == "http" and parts.port == 80)
    ):
        host = f"{host}:{parts.port}"
    added = {"x-amz-date": amz_date, **({"x-amz-security-token": credentials.token} if credentials.token else {})}
    signed = {name.lower(): " ".join(value.split()) for name, value in headers.items()}
    signed.update(added)
    signed["host"] = host
    names = sorted(signed)
    canonical_request = "\n".join(
        [
            method.upper(),
            quote(parts.path or "/", safe="/~"),
            _canonical_query(parts.query),
            "".join(f"{name}:{signed[name]}\n" for name in names),
            ";".join(names),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{credentials.secret_key}".encode(), day), region), service), "aws4_request")
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    credential = f"{credentials.access_key}/{scope}"
    authorization = f"{ALGORITHM} Credential={credential}, SignedHeaders={';'.join(names)}, Signature={signature}"
    return {**{name.title(): value for name, value in added.items()}, "Authorization": authorization}


def query_string(params: Mapping[str, object]) -> str:
    """``params`` (None values left out) percent-encoded as SigV4 wants (RFC 3986 unreserved kept), sorted."""
    items = sorted((str(k), str(v)) for k, v in params.items() if v is not None)
    return "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in items)
