"""A run started by hand (``make consolidate``, the dashboard's ``POST`` of a run) counts every note acknowledged
before it: its event's ``time``, the run's "now", is to the millisecond. To the second, a note written in the
run's own second was neither folded nor counted in ``notes_remaining`` (230 notes written and acknowledged, 200
folded, ``notes_remaining: 29``)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory import bootstrap
from local.consolidate import invoke_run
from local.template import load_handler
from tests.support.consolidation import night_context
from tests.support.management import (
    ADMIN,
    local_auth,  # noqa: F401 - the fixture applies here
    manage,
)
from tests.support.models import scripted_models
from tests.support.scopes import PERSONAL, write_note


@pytest.fixture
def real_clock(monkeypatch: pytest.MonkeyPatch, model: Any) -> None:
    """The clock the stack runs on (no frozen ``MEMORY_NOW``), the fake model kept."""
    monkeypatch.delenv("MEMORY_NOW")
    bootstrap.reset()
    scripted_models().fold = model


def early_in_a_second() -> datetime:
    """Now, just after a second began: a run started right after is of the same second."""
    time.sleep(1.02 - time.time() % 1)
    return datetime.now(UTC)


class Answered:
    """What ``urllib.request.urlopen`` gives ``invoke_run``: the Invoke API's answer."""

    def __init__(self, body: dict[str, Any]) -> None:
        self._body, self.headers = body, {}

    def __enter__(self) -> Answered:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def read(self) -> bytes:
        return json.dumps(self._body).encode()


def test_make_consolidate_right_after_230_notes_folds_200_and_counts_30_remaining(aws, real_clock, monkeypatch):
    for i in range(229):
        write_note(PERSONAL, datetime.now(UTC) - timedelta(minutes=1), f"n{i}")
    write_note(PERSONAL, early_in_a_second(), "n229")  # acknowledged just before the run starts
    monkeypatch.setattr(
        "urllib.request.urlopen",
        lambda request, timeout: Answered(
            load_handler("ConsolidateFunction")(json.loads(request.data), night_context())
        ),
    )

    planned = invoke_run("http://127.0.0.1:3001", 0)

    assert (planned["notes_consolidated"], planned["notes_remaining"]) == (200, 30)


def test_a_run_started_from_the_dashboard_folds_a_note_of_its_own_second_a_week_before(aws, real_clock, monkeypatch):
    invoked: list[dict[str, Any]] = []

    class FakeLambda:
        def invoke(self, **kwargs: Any) -> dict[str, Any]:
            invoked.append(kwargs)
            return {"StatusCode": 202}

    bootstrap.provide(lambda_client=FakeLambda())
    write_note(PERSONAL, early_in_a_second() - timedelta(days=7, milliseconds=1), "a week and a moment old")

    assert manage("start_run", token=ADMIN).status == 202
    run = load_handler("ConsolidateFunction")(json.loads(invoked[0]["Payload"]), night_context())

    assert (run["notes_consolidated"], run["notes_remaining"]) == (1, 0)
