"""The MCP server run over HTTP for a test."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from local.template import ROOT
from tests.support.calls import free_port
from tests.support.stack import Stack


def server_environment(stack: Stack, **settings: str) -> dict[str, str]:
    python_path = os.pathsep.join([str(ROOT / "client"), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "AWS_"))},
        "PYTHONPATH": python_path,
        "MEMORY_API_URL": f"http://127.0.0.1:{stack.api_port}",
        **settings,
    }


@contextmanager
def running_http_server(env: dict[str, str], log: Path) -> Iterator[str]:
    """``mcp_server --transport http`` on a free port, its output in ``log``; yields its base URL once it listens."""
    port = free_port()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "agent_memory_client.mcp_server", "--transport", "http", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and process.poll() is None:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        else:
            pytest.fail(f"the MCP server did not listen:\n{log.read_text()}")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
