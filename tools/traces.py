"""The two traces of docs/architecture.md, measured: a warm `remember` with an `Idempotency-Key`, and a night's
consolidation of one scope's three due notes, in-process and through SQS (the planner, then the worker on its
message), each run through its handler on moto with every call from one of the layer's (or a handler's) modules
into another recorded (``sys.setprofile`` on every thread).

Prints, per trace: the modules entered, the distinct module-to-module steps, the calls across modules, and
the calls back (a call into a module that is already below the caller on the stack). Run from the
repository's root: ``.venv/bin/python tools/traces.py``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "shared"), str(ROOT)]

Call = tuple[str, str, bool]  # caller module, callee module, a call back


@cache
def module(filename: str) -> str | None:
    """The layer's or a handler's module a code object belongs to, relative to the layer; None otherwise."""
    try:
        relative = Path(filename).resolve().relative_to(ROOT)
    except ValueError:
        return None
    if relative.parts[0] not in ("layers", "functions"):
        return None
    return str(relative).replace("layers/shared/agent_memory/", "")


def _project_frames(frame: FrameType | None) -> list[str]:
    found = []
    while frame is not None:
        name = module(frame.f_code.co_filename)
        if name:
            found.append(name)
        frame = frame.f_back
    return found


def trace(run: Callable[[], object]) -> list[Call]:
    calls: list[Call] = []

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event != "call":
            return
        callee = module(frame.f_code.co_filename)
        below = _project_frames(frame.f_back)
        if callee and below and below[0] != callee:
            calls.append((below[0], callee, callee in below[1:]))

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return calls


def report(name: str, calls: list[Call]) -> None:
    modules = list(dict.fromkeys(name for caller, callee, _ in calls for name in (caller, callee)))
    steps = {(caller, callee) for caller, callee, _ in calls}
    back = sorted({(caller, callee) for caller, callee, is_back in calls if is_back})
    print(f"{name}: {len(modules)} modules entered, {len(steps)} distinct module-to-module steps,")
    print(f"  {len(calls)} calls across modules, {len(back)} calls back")
    print(f"  modules: {', '.join(modules)}")
    for caller, callee in back:
        print(f"  call back: {caller} -> {callee}")


def main() -> None:
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "eu-west-1",
            "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
            "MEMORY_TABLE_NAME": "MemoryTable",
            "MEMORY_NOW": "2026-12-04T12:00:00Z",
        }
    )
    import boto3
    from moto import mock_aws

    from agent_memory import bootstrap
    from agent_memory.domain.notes import Origin
    from agent_memory.domain.scope import Scope
    from agent_memory.domain.text_pipeline import NOTE, prepare
    from local.lambda_context import LambdaContext
    from local.template import load_handler, table_definitions
    from tests.support.fakes import FakeChatModel

    with mock_aws():
        client = boto3.client("dynamodb")
        for definition in table_definitions().values():
            client.create_table(**definition)
        tools, consolidate = load_handler("ToolsFunction"), load_handler("ConsolidateFunction")
        remember = json.loads((ROOT / "events" / "remember.json").read_text())
        tools(dict(remember), LambdaContext())  # the traced call is a warm sandbox's
        remember["headers"] = {**remember["headers"], "idempotency-key": "k-1"}
        report("remember (with an Idempotency-Key)", trace(lambda: tools(remember, LambdaContext())))

        services = bootstrap.services()
        created = datetime(2026, 11, 20, 9, tzinfo=UTC)
        for owner in ("u-9", "u-8"):  # u-9 folded in-process, u-8 through the queue
            for i in range(3):
                services.notes.append(
                    Scope("personal", owner),
                    created=created + timedelta(minutes=i),
                    text=prepare(f"fact {i}", "remember", NOTE, extra=frozenset()).text,
                    source="remember",
                    origin=Origin(owner, "t-1"),
                )
        folded = "# Memory\n- fact 0\n- fact 1\n- fact 2\n"
        bootstrap.provide(chat_models=lambda use: FakeChatModel(reply=lambda system, prompt: folded))
        assert bootstrap.services().planner  # built before the trace, as in a warm sandbox
        scheduled = json.loads((ROOT / "events" / "scheduled.json").read_text())
        context = LambdaContext(function_name="ConsolidateFunction", remaining_ms=900_000)
        only_u9 = {**scheduled, "id": "in-process", "detail": {}}
        os.environ["MEMORY_CONSOLIDATION_MAX_GROUPS"] = "1"  # the oldest due scope: u-9's
        bootstrap.reset()
        assert bootstrap.services().planner
        report(
            "a night's consolidation (one scope, three notes, in-process)",
            trace(lambda: consolidate(only_u9, context)),
        )
        _through_the_queue(scheduled)


def _through_the_queue(scheduled: dict[str, Any]) -> None:
    """The night through SQS: the planner sends the one due scope's message to the queue (moto's), and
    ConsolidateWorkerFunction folds it from the SQS event Lambda's event source mapping would hand it."""
    import boto3

    from agent_memory import bootstrap
    from local.lambda_context import LambdaContext
    from local.sqs_mapping import sqs_record
    from local.template import load_handler

    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName="ConsolidationQueue")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    os.environ["MEMORY_CONSOLIDATION_QUEUE_URL"] = url
    bootstrap.reset()
    services = bootstrap.services()
    assert services.planner and services.worker  # built before the trace, as in warm sandboxes
    consolidate, worker = load_handler("ConsolidateFunction"), load_handler("ConsolidateWorkerFunction")
    planner_context = LambdaContext(function_name="ConsolidateFunction", remaining_ms=900_000)
    planned = trace(lambda: consolidate({**scheduled, "id": "through-sqs"}, planner_context))
    [message] = sqs.receive_message(QueueUrl=url, AttributeNames=["All"])["Messages"]
    event = {"Records": [sqs_record(message, arn, "eu-west-1")]}
    worker_context = LambdaContext(function_name="ConsolidateWorkerFunction", remaining_ms=300_000)
    folded = trace(lambda: worker(event, worker_context))
    report("a night through SQS, the planner (one scope sent)", planned)
    report("a night through SQS, the worker (its message folded)", folded)
    report("a night through SQS, both", planned + folded)


if __name__ == "__main__":
    main()
