"""The MCP server's token verification (``agent_memory_client.mcp_auth``), offline: the dashboard's rules."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from typing import Any

import anyio
import jwt
import pytest
from agent_memory_client.mcp_auth import JwtVerifier, workspaces_of
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from starlette.requests import HTTPConnection

SECRET = "unit-secret"
VERIFIER = JwtVerifier("memory-local", "memory-dashboard", secret=SECRET)


def token(secret: str = SECRET, algorithm: str = "HS256", **overrides: Any) -> str:
    claims = {"iss": "memory-local", "aud": "memory-dashboard", "sub": "u-1", "exp": int(time.time()) + 600}
    claims.update(overrides)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, secret, algorithm=algorithm)


def unsigned(**claims: Any) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def test_a_valid_token_gives_its_subject_and_workspaces() -> None:
    access = anyio.run(VERIFIER.verify_token, token(workspaces="[w-1 w-2]"))

    assert access is not None and access.subject == "u-1" and access.client_id == "u-1"
    assert access.claims == {"workspaces": ["w-1", "w-2"]}


@pytest.mark.parametrize(
    "bad",
    [
        lambda: token(exp=int(time.time()) - 120),  # expired beyond the 60 s leeway
        lambda: token(nbf=int(time.time()) + 600),  # not yet valid
        lambda: token(exp=None),  # no exp
        lambda: token(exp="9999999999"),  # exp of the wrong type
        lambda: token(exp=1e308),  # for ever, as a number
        lambda: token(exp=float("inf")),  # Infinity, which Python's JSON reads
        lambda: token(exp=float("nan")),  # NaN, which no comparison refuses
        lambda: token(exp=int(time.time()) + 400 * 86400),  # more than a year ahead
        lambda: token(nbf=float("-inf")),
        lambda: token(iat=float("nan")),
        lambda: token(sub=None),
        lambda: token(sub="u 1"),  # not an id
        lambda: token(aud="elsewhere"),
        lambda: token(iss="elsewhere"),
        lambda: token(secret="another-secret"),
        lambda: unsigned(iss="memory-local", aud="memory-dashboard", sub="u-1", exp=int(time.time()) + 600),
        lambda: "not.a.jwt",
    ],
    ids=[
        "expired",
        "nbf",
        "no-exp",
        "exp-string",
        "exp-1e308",
        "exp-infinity",
        "exp-nan",
        "exp-past-a-year",
        "nbf-infinity",
        "iat-nan",
        "no-sub",
        "sub-not-id",
        "aud",
        "iss",
        "forged",
        "alg-none",
        "junk",
    ],
)
def test_a_bad_token_gives_no_identity(bad: Callable[[], str]) -> None:
    """Each token is made when its test runs: one made at collection with ``nbf`` 600 s ahead was already valid
    when a long run reached it."""
    assert anyio.run(VERIFIER.verify_token, bad()) is None


def test_an_expiry_within_the_leeway_still_passes() -> None:
    assert anyio.run(VERIFIER.verify_token, token(exp=int(time.time()) - 30)) is not None


def test_a_token_for_up_to_a_year_passes() -> None:
    assert anyio.run(VERIFIER.verify_token, token(exp=int(time.time()) + 360 * 86400)) is not None


def authenticated(bearer: str) -> bool:
    """Whether the ``mcp`` SDK's own bearer middleware, with this verifier, lets the request through."""
    backend = BearerAuthBackend(VERIFIER)
    request = HTTPConnection({"type": "http", "headers": [(b"authorization", f"Bearer {bearer}".encode())]})
    return anyio.run(backend.authenticate, request) is not None


@pytest.mark.parametrize(("expired_s", "passes"), [(30, True), (55, True), (90, False)])
def test_the_sdks_middleware_honours_the_60_s_leeway(expired_s: int, passes: bool) -> None:
    assert authenticated(token(exp=int(time.time()) - expired_s)) is passes


@pytest.mark.parametrize(
    ("claim", "members"),
    [
        (["w-1", "w-2"], ["w-1", "w-2"]),
        ("w-1 w-2", ["w-1", "w-2"]),
        ("w-1,w-2", ["w-1", "w-2"]),
        ("[w-1 w-2]", ["w-1", "w-2"]),
        (["w-1", 2], []),  # not all strings: a member of nothing
        ({"w-1": True}, []),
        (None, []),
        (["w 1", "w-2"], ["w-2"]),  # only ids count
    ],
)
def test_the_workspaces_claim_takes_the_dashboards_shapes(claim: object, members: list[str]) -> None:
    assert workspaces_of(claim) == members


def test_a_verifier_needs_exactly_one_key_source() -> None:
    with pytest.raises(ValueError):
        JwtVerifier("i", "a")
    with pytest.raises(ValueError):
        JwtVerifier("i", "a", secret="s", jwks_url="https://issuer.example/jwks")
