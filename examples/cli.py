"""What the examples share: the command line (where the memory service is, whose conversation it is) and the
transcript's short form of a value.

Against ``make run`` the defaults are right; ``make demo EXAMPLE=NAME`` starts a stack of its own
and passes its ports here.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
from typing import Any

from agent_memory_client import ConversationContext, MemoryClient
from agent_memory_client.types import Extracted


def lambda_url_for(api_url: str, lambda_url: str | None) -> str | None:
    """The Invoke API the flush is sent to: ``lambda_url``, else the local stack's (the API's port + 1)."""
    if lambda_url is None and api_url.startswith(("http://127.0.0.1:", "http://localhost:")):
        host, port = api_url.rsplit(":", 1)
        return f"{host}:{int(port.strip('/')) + 1}"
    return lambda_url


def parser(prog: str, description: str, *, user: str = "ana") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--api-url", default=os.environ.get("MEMORY_API_URL", "http://127.0.0.1:3000"))
    p.add_argument("--lambda-url", default=os.environ.get("MEMORY_LAMBDA_URL"), help="locally http://127.0.0.1:3001")
    p.add_argument("--user", default=user, help="whose memory: the backend's signed-in user, never the model's")
    p.add_argument("--thread", default="t-example")
    return p


def open_memory(args: argparse.Namespace) -> tuple[MemoryClient, ConversationContext]:
    """The client for ``--api-url`` and the context of this conversation (a private thread of ``--user``)."""
    client = MemoryClient(args.api_url, lambda_endpoint=lambda_url_for(args.api_url, args.lambda_url))
    return client, ConversationContext(user_id=args.user, thread_id=args.thread)


def short(value: Any, limit: int = 240) -> str:
    """``value`` on one line of the transcript: a string as it is, anything else as JSON, cut at ``limit``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def extracted(answer: Extracted | None) -> str:
    """The session end's extraction as a transcript line: its status and the facts written and skipped."""
    if answer is None:
        return "── session end ──\nextraction: nothing to extract"
    facts = [
        f"note {note['id']} (messages {note['origin'].get('messages')}): {note['text']}" for note in answer["notes"]
    ]
    skipped = [f"skipped (already held by {', '.join(fact['similar'])}): {fact['text']}" for fact in answer["skipped"]]
    return "\n".join(["── session end ──", f"extraction: {answer['status']}", *facts, *skipped])


def free_port() -> int:
    """A free TCP port of 127.0.0.1, for a server an example starts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
