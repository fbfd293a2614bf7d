"""``make demo`` as CI runs it, and its transcript checked; the example's provider requests checked against the SDKs."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from botocore.session import get_session
from botocore.validate import ParamValidator
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

from examples.demo import stack_port
from examples.models import converse_messages, openai_messages
from tests.support.calls import free_ports

ROOT = Path(__file__).resolve().parents[2]
FACT = "Ana lives in Lisbon and wants metric units"


def sections(transcript: str) -> dict[str, str]:
    """``── turn N ──`` and ``── compaction ... ──`` sections by their title."""
    parts = re.split(r"^── (.+?) ──$", transcript, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def memory_block(section: str) -> str:
    return section.split("memory block:")[1].split("user> ")[0]


@pytest.mark.slow
def test_make_demo_remembers_recalls_updates_and_flushes_before_the_compaction() -> None:
    """On the stack's ports that ``MEMORY_API_PORT`` and ``MEMORY_LAMBDA_PORT`` set, as ``make run`` reads them."""
    api_port, lambda_port = free_ports(2)
    command = ["make", "-s", "--no-print-directory", "demo", f"MEMORY_API_PORT={api_port}"]
    env = {**os.environ, "MEMORY_LAMBDA_PORT": str(lambda_port)}  # one from the command line, one exported
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(
        f"demo: memory API http://127.0.0.1:{api_port}, Lambda Invoke API http://127.0.0.1:{lambda_port}, "
    ), done.stdout[:300]
    turns = sections(done.stdout)
    titles = list(turns)

    assert titles == ["turn 1", "turn 2", "turn 3", "turn 4", "compaction t-demo-compaction-1", "turn 5"]
    assert FACT not in memory_block(turns["turn 1"])
    assert f'model → remember {{"text": "{FACT}"}}' in turns["turn 1"]
    assert "model → update_memory" in turns["turn 2"] and '"version": 1' in turns["turn 2"]
    assert "model → recall" in turns["turn 3"] and f"assistant> From my notes: {FACT}." in turns["turn 3"]
    # The fact remembered in turn 1 is in the memory block of every later turn.
    assert all(FACT in memory_block(turns[f"turn {n}"]) for n in (2, 3, 4, 5))
    # The flush wrote its note at the compaction, and the next turn's memory block shows it.
    flushed = re.search(r"^flush: written — note (\S+): (.+)$", turns["compaction t-demo-compaction-1"], re.MULTILINE)
    assert flushed is not None
    assert f"#{flushed[1].split('.')[-1]}] {flushed[2]}" in memory_block(turns["turn 5"])
    assert flushed[2] not in memory_block(turns["turn 4"])


HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "Where do I live?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "name": "recall", "arguments": {"query": "live"}},
            {"id": "c2", "name": "remember", "arguments": {"text": "x", "user_id": "u-2"}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "recall", "content": {"notes": [], "mode": "keyword"}},
    {"role": "tool", "tool_call_id": "c2", "name": "remember", "content": {"error": {"code": "invalid_input"}}},
    {"role": "assistant", "content": "I don't know yet."},
]


def valid_openai_message(message: dict[str, Any]) -> bool:
    """The SDK's message type accepts it and keeps every key (``tool_calls`` is validated lazily: drained here)."""
    validated = TypeAdapter(ChatCompletionMessageParam).validate_python(message)
    return {key: list(value) if key == "tool_calls" else value for key, value in validated.items()} == message


def test_the_examples_requests_are_valid_for_bedrock_converse_and_openai() -> None:
    shape = get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape
    converse = {"modelId": "m", "system": [{"text": "s"}], "messages": converse_messages(HISTORY)}
    chat = openai_messages("s", HISTORY)

    assert ParamValidator().validate(converse, shape).generate_report() == ""
    assert [m["role"] for m in converse["messages"]] == ["user", "assistant", "user", "assistant"]
    results = converse["messages"][2]["content"]
    assert [r["toolResult"].get("status") for r in results] == [None, "error"]
    assert all(valid_openai_message(message) for message in chat)
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "tool", "tool", "assistant"]


@pytest.mark.parametrize("value", ["abc", "70000", "0"])
def test_a_port_that_is_not_one_stops_the_demo_with_one_line(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("MEMORY_API_PORT", value)

    with pytest.raises(SystemExit, match=f"MEMORY_API_PORT must be a TCP port number, not '{value}'"):
        stack_port("MEMORY_API_PORT")


def test_without_a_port_set_the_demo_takes_a_free_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_LAMBDA_PORT", raising=False)

    assert 0 < stack_port("MEMORY_LAMBDA_PORT") < 65536
