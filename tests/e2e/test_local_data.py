"""docs/local-stack.md "Where the local data lives": the embedded DynamoDB's data survives a clean restart,
a killed stack keeps what the last save held, ``FRESH`` starts empty, and a snapshot it cannot use stops
the stack with one line and stays as it was."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.stack import (
    NOW,
    README_CONTEXT,
    ROOT,
    Stack,
    free_ports,
    memory_context,
    remember,
    running_stack,
    stack_environment,
    wait_until_healthy,
)

pytestmark = pytest.mark.slow

SAVE_SECONDS = "1"


def texts(stack: Stack) -> list[str]:
    answer = memory_context(stack, README_CONTEXT)
    assert answer.status == 200, answer.body
    return [note["text"] for note in answer.body["recent_notes"]]


@contextmanager
def killed_at_exit(logs: Path, data: Path) -> Iterator[Stack]:
    """A stack on ``data`` that is killed (SIGKILL, no cleanup) when the block ends: a crash."""
    api_port, lambda_port = free_ports(2)
    env = stack_environment(
        MEMORY_API_PORT=str(api_port),
        MEMORY_LAMBDA_PORT=str(lambda_port),
        MEMORY_LOCAL_DATA=str(data),
        MEMORY_LOCAL_SAVE_SECONDS=SAVE_SECONDS,
        MEMORY_NOW=NOW,  # running_stack's clock, for the stack started after it
    )
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / "stdout.log").open("wb") as stdout, (logs / "stderr.log").open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "local.server"], cwd=ROOT, env=env, stdout=stdout, stderr=stderr
        )
    stack = Stack(process, api_port, lambda_port, logs)
    try:
        wait_until_healthy(stack)
        yield stack
    finally:
        process.kill()
        process.wait()


def saved(data: Path, text: bytes) -> bool:
    """Whether the snapshot on disk holds ``text`` (a pickle keeps an item's strings as they are)."""
    snapshot = data / "dynamodb.pickle"
    return snapshot.exists() and text in snapshot.read_bytes()


def on(data: Path, **settings: str) -> dict[str, str]:
    return {"MEMORY_LOCAL_DATA": str(data), "MEMORY_LOCAL_SAVE_SECONDS": SAVE_SECONDS, **settings}


def test_a_clean_stop_keeps_the_data_and_fresh_starts_empty(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_stack(tmp_path / "first", **on(data)) as first:
        assert remember(first, README_CONTEXT, "Prefers metric units").status == 201
        second = started_alone(on(data))  # a second stack on the same folder, on ports of its own
        assert second.returncode == 1
        assert f"the local data {data.resolve()} is in use by another local stack (pid " in second.stderr
    # stopped with SIGTERM, as Ctrl-C stops `make run`: the last save is the clean stop's

    with running_stack(tmp_path / "second", **on(data)) as second:
        assert texts(second) == ["Prefers metric units"]
        assert f"Data           {data.resolve()}  (" in second.stderr()

    with running_stack(tmp_path / "fresh", **on(data, MEMORY_LOCAL_FRESH="1")) as fresh:
        assert texts(fresh) == []
        assert "started empty (FRESH)" in fresh.stderr()
    assert (data / "dynamodb.pickle.before-fresh").exists()  # the data before FRESH, kept once


def test_a_killed_stack_keeps_what_the_last_interval_saved(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with killed_at_exit(tmp_path / "crashed", data) as crashed:
        assert remember(crashed, README_CONTEXT, "Works in Lisbon").status == 201
        deadline = time.monotonic() + 30
        while not saved(data, b"Works in Lisbon") and time.monotonic() < deadline:  # the interval's save (1 s)
            time.sleep(0.2)
        assert saved(data, b"Works in Lisbon"), "no save within 30 s at a 1 s interval"

    with running_stack(tmp_path / "after", **on(data)) as after:
        assert texts(after) == ["Works in Lisbon"]


def started_alone(settings: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A stack that is expected to stop by itself at start: its exit and output."""
    api_port, lambda_port = free_ports(2)
    env = stack_environment(MEMORY_API_PORT=str(api_port), MEMORY_LAMBDA_PORT=str(lambda_port), **settings)
    command = [sys.executable, "-m", "local.server"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_snapshot_it_cannot_read_stops_the_stack_and_stays_as_it_was(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "dynamodb.pickle").write_bytes(b"not a snapshot")

    done = started_alone(on(data))

    assert done.returncode == 1
    assert "is not usable" in done.stderr and "make run FRESH=1" in done.stderr
    assert (data / "dynamodb.pickle").read_bytes() == b"not a snapshot"
