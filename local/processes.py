"""Stopping a child process that a local tool started (the stack, an OpenSearch node, a moto server)."""

from __future__ import annotations

import subprocess
from typing import Any


def stop(process: subprocess.Popen[Any], timeout_s: float = 30) -> int:
    """SIGTERM, then SIGKILL if it has not exited after ``timeout_s``; its exit code."""
    process.terminate()
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
