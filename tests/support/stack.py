"""The local stack (`python -m local.server`) run as a subprocess for a test, and plain HTTP to it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from local.template import ROOT
from tests.support.calls import NOW, free_ports

README_CONTEXT = {"user_id": "u-1", "thread_id": "t-1", "visibility": "private"}
FAKE_CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "local", "aws_secret_access_key": "local"}
REMEMBER_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ POST /v1/tools/remember -> 201 ToolsFunction [\d.]+ms$")

# Requests to 127.0.0.1 never go through a proxy, whatever the developer's environment says.
local_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True)
class Stack:
    process: subprocess.Popen[bytes]
    api_port: int
    lambda_port: int
    logs: Path

    def stderr(self) -> str:
        return (self.logs / "stderr.log").read_text()

    def stdout(self) -> str:
        return (self.logs / "stdout.log").read_text()


@dataclass(frozen=True)
class Response:
    status: int
    body: Any
    headers: Message


def http(stack: Stack, method: str, path: str, body: Any = None, *, token: str | None = None) -> Response:
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json"} if data is not None else {}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    url = f"http://127.0.0.1:{stack.api_port}{path}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with local_opener.open(request, timeout=10) as answer:
            status, raw, answer_headers = answer.status, answer.read(), answer.headers
    except urllib.error.HTTPError as error:
        status, raw, answer_headers = error.code, error.read(), error.headers
    return Response(status, json.loads(raw) if raw else None, answer_headers)


def remember(stack: Stack, context: dict[str, Any], text: str) -> Response:
    return http(stack, "POST", "/v1/tools/remember", {"context": context, "arguments": {"text": text}})


def memory_context(stack: Stack, context: dict[str, Any]) -> Response:
    return http(stack, "POST", "/v1/context", {"context": context})


def stack_environment(**settings: str) -> dict[str, str]:
    """The developer's environment without anything AWS, Powertools or memory: the stack sets its own defaults;
    nor anything of a ``make`` running these tests (a nested make prints its directory around its output)."""
    prefixes = ("AWS_", "MEMORY_", "POWERTOOLS_", "OPENAI_", "MAKE", "MFLAGS")
    return {**{name: value for name, value in os.environ.items() if not name.startswith(prefixes)}, **settings}


def wait_until_healthy(stack: Stack, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if stack.process.poll() is not None:
            pytest.fail(f"the local stack exited with {stack.process.returncode}:\n{stack.stderr()}")
        try:
            health = http(stack, "GET", "/v1/health")
            if health.status == 200 and health.body == {"status": "ok"}:
                return
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.1)
    pytest.fail(f"the local stack did not answer GET /v1/health within {timeout_s} s:\n{stack.stderr()}")


def stop(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM, and the exit code. A stack still running after two minutes is asked for its threads' stacks
    (SIGUSR1, into its stderr.log) before it is killed, so that the failure says where the stop hung."""
    process.terminate()
    try:  # generous: on a loaded 2-core machine the cleanup (the pollers, the last save of the data) took 60 s
        return process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)
        time.sleep(1)
        process.kill()
        process.wait()
        raise


@contextmanager
def running_stack(logs: Path, **settings: str) -> Iterator[Stack]:
    """Start the stack as ``make run`` does, on free ports; on exit stop it with SIGTERM and check it exits 0."""
    api_port, lambda_port = free_ports(2)
    env = stack_environment(MEMORY_API_PORT=str(api_port), MEMORY_LAMBDA_PORT=str(lambda_port), MEMORY_NOW=NOW)
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / "stdout.log").open("wb") as stdout, (logs / "stderr.log").open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "local.server"], cwd=ROOT, env={**env, **settings}, stdout=stdout, stderr=stderr
        )
    stack = Stack(process, api_port, lambda_port, logs)
    try:
        wait_until_healthy(stack)
        yield stack
    finally:
        try:
            returncode = stop(process)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the local stack did not stop within 120 s of SIGTERM:\n{stack.stderr()}")
    assert returncode == 0, f"the local stack did not exit cleanly ({returncode}):\n{stack.stderr()}"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One stack on the embedded moto for the module: ``AWS_ENDPOINT_URL_DYNAMODB`` is not set."""
    with running_stack(tmp_path_factory.mktemp("local-stack")) as running:
        yield running


@pytest.fixture(scope="module")
def lambda_client(stack: Stack) -> Any:
    endpoint = f"http://127.0.0.1:{stack.lambda_port}"
    return boto3.client("lambda", endpoint_url=endpoint, config=Config(retries={"max_attempts": 1}), **FAKE_CREDENTIALS)


# --- The HTTP API ----------------------------------------------------------------------------------------------


def printed_sign_in_address(stack: Stack) -> str:
    """The dashboard's address with the development sign-in's key, as the stack's banner printed it."""
    found = re.search(r"^  Dashboard +(http://\S+/dashboard/\?key=\S+)", stack.stderr(), re.MULTILINE)
    assert found, stack.stderr()
    return found.group(1)
