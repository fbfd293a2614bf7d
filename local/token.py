"""``make token SUB=... WORKSPACES=... [ADMIN=1]``: a development token for the local stack's dashboard API.

HS256 with ``$MEMORY_LOCAL_JWT_SECRET`` (default ``local-dev-secret``), issuer ``memory-local``, audience
``memory-dashboard``, valid for 12 hours (docs/api.md §5). It only works against the local stack.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from typing import Any

import jwt
from jwt.warnings import InsecureKeyLengthWarning

DEFAULT_SECRET = "local-dev-secret"  # noqa: S105 - the contract's public development secret


def mint(sub: str, workspaces: object, *, admin: bool = False, ttl_s: int = 12 * 3600, **claims: Any) -> str:
    from agent_memory.edges.auth import LOCAL_AUDIENCE, LOCAL_ISSUER  # the layer is on the path by then

    now = int(time.time())
    payload: dict[str, Any] = {
        "iss": LOCAL_ISSUER,
        "aud": LOCAL_AUDIENCE,
        "sub": sub,
        "iat": now,
        "exp": now + ttl_s,
        "workspaces": workspaces,
        **({"memory_admin": True} if admin else {}),
        **claims,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureKeyLengthWarning)  # the contract's local secret is short
        return jwt.encode(payload, os.environ.get("MEMORY_LOCAL_JWT_SECRET") or DEFAULT_SECRET, algorithm="HS256")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sub", required=True, help="the user id")
    parser.add_argument("--workspaces", default="", help="workspace ids, separated by spaces or commas")
    parser.add_argument("--admin", action="store_true", help="mark the user an operator (memory_admin)")
    args = parser.parse_args()
    workspaces = [w for w in args.workspaces.replace(",", " ").split() if w]
    print(mint(args.sub, workspaces, admin=args.admin))


if __name__ == "__main__":
    main()
