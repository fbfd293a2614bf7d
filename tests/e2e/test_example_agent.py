"""``examples/agent_chat.py`` as the docs run it (``.venv/bin/python -m examples.agent_chat``, no
``PYTHONPATH``): against a stack with no model its flush writes a note, and Bedrock without a region or
credentials is one line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.stack import ROOT, running_stack, stack_environment

pytestmark = pytest.mark.slow

NO_AWS = {
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",  # no instance role to look for: the answer comes at once
}


def example(*args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in stack_environment(**settings).items() if name != "PYTHONPATH"}
    command = [sys.executable, "-m", "examples.agent_chat", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_offline_against_a_stack_with_no_model_the_flush_keeps_the_plan(tmp_path: Path) -> None:
    with running_stack(tmp_path) as stack:
        done = example(
            "--offline",
            "--user",
            "u-example",
            "--api-url",
            f"http://127.0.0.1:{stack.api_port}",
            "--lambda-url",
            f"http://127.0.0.1:{stack.lambda_port}",
        )

    assert done.returncode == 0, done.stderr
    flushed = [line for line in done.stdout.splitlines() if line.startswith("flush: ")]
    assert len(flushed) == 1, done.stdout
    assert flushed[0].startswith("flush: written (no model: extracted from the messages) — note ")
    # The plan of turn 4 is kept, with its date and its name; the greeting of turn 1 is not.
    assert "User: Let's plan the billing migration: cutover the week of January 12, Dana signs off" in flushed[0]
    assert "Hi! I'm Ana" not in flushed[0]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((), "Bedrock needs an AWS region: pass --region or set AWS_DEFAULT_REGION"),
        (("--region", "eu-west-1"), "Bedrock needs AWS credentials and none were found"),
    ],
)
def test_bedrock_without_a_region_or_credentials_is_one_line(args: tuple[str, ...], says: str) -> None:
    done = example("--user", "u-1", *args, **NO_AWS)

    assert done.returncode == 2
    assert done.stderr.startswith(f"agent_chat: {says}") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
