"""Who is calling the MCP server over HTTP: a bearer token verified as the dashboard's is (docs/client.md,
"MCP for many users"), through the ``mcp`` SDK's own authorization (``TokenVerifier``, ``AuthSettings``).

The token must be signed (HS256 with a shared secret, or RS256/ES256 by a key of the issuer's JWKS), name the
issuer and the audience, carry ``exp`` (and ``nbf`` when present) within 60 s of the real clock, its time
claims finite JSON numbers, ``exp`` at most a year ahead, and a ``sub`` of the id pattern; ``workspaces`` lists
the workspaces its user belongs to (a JSON array of ids, or one string of ids separated by spaces or commas,
optionally in brackets). Anything else: no
identity, and the SDK answers 401 with the protected-resource metadata's address in ``WWW-Authenticate``.
"""

from __future__ import annotations

import math
import re
import time
import warnings
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import jwt
from mcp.server.auth.provider import AccessToken

LEEWAY_S = 60
# A token is a session's identity for as long as it lives: one that claims to live longer than a year (or for
# ever: 1e308, Infinity) is refused, as a token that could never be taken back.
MAX_LIFETIME_S = 365 * 24 * 3600
ID = re.compile(r"^[A-Za-z0-9._@-]{1,128}$")


def workspaces_of(claim: object) -> list[str]:
    """The ids a ``workspaces`` claim lists; any other shape lists none."""
    if isinstance(claim, str):
        text = claim.strip()
        text = text[1:-1] if text[:1] == "[" and text[-1:] == "]" else text
        items: list[object] = list(filter(None, re.split(r"[\s,]+", text)))
    elif isinstance(claim, list) and all(isinstance(item, str) for item in claim):
        items = list(claim)
    else:
        items = []
    return sorted({item for item in items if isinstance(item, str) and ID.fullmatch(item)})


@dataclass
class JwtVerifier:
    """The MCP SDK's ``TokenVerifier`` for the dashboard's tokens: ``secret`` (HS256) or ``jwks_url``."""

    issuer: str
    audience: str
    secret: str | None = None
    jwks_url: str | None = None

    def __post_init__(self) -> None:
        if (self.secret is None) == (self.jwks_url is None):
            raise ValueError("give exactly one of a secret (HS256) or a JWKS URL")
        self._jwks = jwt.PyJWKClient(self.jwks_url) if self.jwks_url else None

    def claims(self, token: str) -> dict[str, Any] | None:
        """The verified claims, or None."""
        try:
            if self._jwks is not None:
                key: Any = self._jwks.get_signing_key_from_jwt(token).key
                algorithms = ["RS256", "ES256"]
            else:
                key, algorithms = self.secret, ["HS256"]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a short local secret is the local stack's, as the dashboard's
                claims: dict[str, Any] = jwt.decode(
                    token,
                    key,
                    algorithms=algorithms,
                    audience=self.audience,
                    issuer=self.issuer,
                    leeway=LEEWAY_S,
                    options={"require": ["exp", "iss", "aud", "sub"]},
                )
        except (jwt.PyJWTError, ValueError, TypeError):
            return None
        subject = claims.get("sub")
        if not isinstance(subject, str) or not ID.fullmatch(subject):
            return None
        for name in ("exp", "nbf", "iat"):  # finite JSON numbers (pyjwt would read "123" as one, and NaN passes)
            value = claims.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                return None
        if claims["exp"] > time.time() + MAX_LIFETIME_S:
            return None
        return claims

    async def verify_token(self, token: str) -> AccessToken | None:
        claims = await anyio.to_thread.run_sync(self.claims, token)  # a JWKS fetch must not block the loop
        if claims is None:
            return None
        return AccessToken(
            token=token,
            client_id=claims["sub"],
            scopes=[],
            # The SDK refuses a token once expires_at is past: the documented leeway is counted in it.
            expires_at=int(claims["exp"]) + LEEWAY_S,
            subject=claims["sub"],
            claims={"workspaces": workspaces_of(claims.get("workspaces"))},
        )
