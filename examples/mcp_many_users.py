"""One MCP server for a whole team: over streamable HTTP, each session's identity is its bearer token's.

The example starts ``agent-memory-mcp --transport http --auth jwt`` (or uses ``--mcp-url``), gives two users a
token each (HS256, as the dashboard's: issuer ``memory-local``, audience ``memory-dashboard``, ``sub`` the user),
and opens their two sessions at once with the ``mcp`` SDK's client, as two agent hosts would. Each session plays
a scripted agent's tool calls: each user sees only their own memory, a tool argument naming another user is an
error result, and a forged token is refused before any session starts.

::

    make run                                                     # the local stack, in another terminal
    PYTHONPATH=client python -m examples.mcp_many_users          # starts the MCP server on a free port, then stops it
    make demo EXAMPLE=mcp_many_users                             # the same, on a local stack it starts and stops

The tokens are signed with the local stack's development secret, so ``make token SUB=ana`` prints one that works
here too; in production the server checks the tokens of your identity provider (``--jwks-url``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jwt
from jwt.warnings import InsecureKeyLengthWarning
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from examples.cli import free_port, parser, short
from local.processes import stop

ROOT = Path(__file__).resolve().parents[1]
LOCAL_SECRET = "local-dev-secret"  # noqa: S105 - the local stack's public development secret (make token)
# A scripted agent's tool calls in each user's session: what a model would ask for, no model needed.
SESSION: list[tuple[str, dict[str, Any]]] = [
    ("remember", {"text": "{name} flies to {city} in May"}),
    ("recall", {"query": "flies", "k": 3}),
    ("remember", {"text": "a note for someone else", "user_id": "{other}"}),
]
CITIES = ("Oslo", "Rome")  # where each of the two users flies


def token(user: str, secret: str, ttl_s: int = 600) -> str:
    """A bearer token for ``user``, shaped as the dashboard's (the workspaces claim lists none)."""
    claims = {"iss": "memory-local", "aud": "memory-dashboard", "sub": user, "workspaces": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureKeyLengthWarning)  # the local secret is short, and public
        return jwt.encode({**claims, "exp": int(time.time()) + ttl_s}, secret, algorithm="HS256")


@contextmanager
def mcp_server(api_url: str, secret: str, timeout_s: float = 30) -> Iterator[str]:
    """``agent-memory-mcp --transport http --auth jwt`` on a free loopback port; yields its ``/mcp`` URL."""
    port = free_port()
    client = os.pathsep.join([str(ROOT / "client"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env = {**os.environ, "PYTHONPATH": client, "MEMORY_MCP_JWT_SECRET": secret}
    command = [sys.executable, "-m", "agent_memory_client.mcp_server", "--transport", "http", "--auth", "jwt"]
    process = subprocess.Popen([*command, "--port", str(port), "--api-url", api_url], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + timeout_s
        while process.poll() is None and time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise SystemExit(f"mcp_many_users: the MCP server did not listen on port {port}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process, timeout_s=10)


async def session(url: str, user: str, values: dict[str, str], secret: str, out: Callable[[str], None]) -> list[Any]:
    """One user's session: the scripted calls (``values`` fill them in), with this user's token; the results."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token(user, secret)}"}, timeout=30)
    results = []
    async with Client(streamable_http_client(url, http_client=http)) as client:
        for name, arguments in SESSION:
            filled = {
                key: value.format(**values) if isinstance(value, str) else value for key, value in arguments.items()
            }
            result = await client.call_tool(name, filled)
            out(f"{user}: → {name} {short(filled)}")
            out(f"{user}: ← {'error: ' if result.is_error else ''}{short(result.structured_content, 200)}")
            results.append(result)
    return results


def play(url: str, secret: str, users: tuple[str, str], out: Callable[[str], None] = print) -> dict[str, list[Any]]:
    """The two users' sessions at the same time; then a forged token's request."""
    outcomes: dict[str, list[Any]] = {}

    async def one(user: str, city: str, other: str) -> None:
        values = {"name": user, "city": city, "other": other}
        outcomes[user] = await session(url, user, values, secret, out)

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(one, users[0], CITIES[0], users[1])
            group.start_soon(one, users[1], CITIES[1], users[0])

    anyio.run(run)
    forged = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        headers={"Authorization": f"Bearer {token('ana', 'not-the-secret')}", "Accept": "application/json"},
    )
    out(f"forged token: HTTP {forged.status_code}, {forged.headers.get('www-authenticate', '')}")
    return outcomes


def main(argv: list[str] | None = None, out: Callable[[str], None] = print) -> int:
    p = parser("python -m examples.mcp_many_users", __doc__.split("\n\n")[0])
    p.add_argument(
        "--mcp-url", default=None, help="an MCP server already running with --auth jwt (else one is started)"
    )
    p.add_argument("--jwt-secret", default=os.environ.get("MEMORY_LOCAL_JWT_SECRET") or LOCAL_SECRET)
    p.add_argument("--colleague", default="ben", help="the second user, whose session runs beside --user's")
    args = p.parse_args(argv)
    if args.mcp_url:
        play(args.mcp_url, args.jwt_secret, (args.user, args.colleague), out)
        return 0
    with mcp_server(args.api_url, args.jwt_secret) as url:
        out(f"MCP server {url} (--auth jwt), memory API {args.api_url}")
        play(url, args.jwt_secret, (args.user, args.colleague), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
