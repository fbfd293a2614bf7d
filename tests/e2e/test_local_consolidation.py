"""docs/api.md §6 locally: ``make run`` plays the consolidation queue and its event source mapping; a run of a
few hundred groups started from the dashboard API finishes its groups, then its record says finished."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from local.token import mint
from tests.support.fake_openai import fake_openai_server
from tests.support.stack import http, remember, running_stack

SCOPES = 40


def test_a_local_run_fans_out_and_finishes_after_its_groups(tmp_path: Path) -> None:
    operator = mint("ops", [], admin=True)
    with (
        fake_openai_server(reply="# Team memory\n- folded") as model,
        running_stack(
            tmp_path,
            MEMORY_CHAT_MODEL="openai:fake",
            OPENAI_BASE_URL=model.base_url,
            MEMORY_CONSOLIDATION_MIN_AGE_DAYS="0",
            MEMORY_CONSOLIDATION_MAX_GROUPS="0",
        ) as stack,
    ):
        for i in range(SCOPES):
            context = {"user_id": "u-1", "thread_id": "t-1", "visibility": "shared", "workspace_id": f"w-{i}"}
            assert remember(stack, context, f"fact {i}").status == 201
        started = http(stack, "POST", "/v1/admin/consolidation/runs", token=operator)
        assert started.status == 202
        deadline = time.monotonic() + 300  # a functional check: the 60 s bound is a speed goal (bench)
        run: dict[str, Any] = {}
        seen_running = False
        while time.monotonic() < deadline:
            runs = http(stack, "GET", "/v1/admin/consolidation/runs?limit=5", token=operator).body["runs"]
            run = next((run for run in runs if run["run_id"] == started.body["run_id"]), {})
            seen_running |= run.get("status") == "running"
            if run.get("finished_at"):
                break
            time.sleep(0.2)
        calls = model.calls()

    assert run.get("status") == "finished", run
    assert (run["groups_planned"], run["groups_done"], run["notes_consolidated"]) == (SCOPES, SCOPES, SCOPES)
    assert run["notes_remaining"] == 0 and run["failures"] == []
    assert calls == SCOPES
    assert seen_running  # listed with its progress while the workers were folding
