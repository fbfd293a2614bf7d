"""A consolidation run in-process: its scheduled event, a fake model's fold, what the table holds after."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.basics.clock import iso
from agent_memory.domain.commands import GroupMessage
from agent_memory.domain.scope import Scope
from agent_memory.storage.document_store import DocumentStore
from local.lambda_context import LambdaContext
from local.template import load_handler
from tests.support.events import event_body
from tests.support.fakes import FakeChatModel
from tests.support.faults import Crash, crash_at, saving_a_version, updating
from tests.support.models import scripted_models
from tests.support.scopes import PERSONAL

RUN_AT = datetime(2026, 12, 3, 3, 0, tzinfo=UTC)


NOTE_LINE = re.compile(r"^- \[(?P<day>[0-9-]+)\] \(id (?P<id>[0-9.-]+)\) (?P<text>.*)$", re.M)


def merge(system: str, prompt: str) -> str | dict:
    """The fake model's consolidation: each note's line added at the end of the document, as cited edits when
    asked for edits, else as the whole document."""
    if "edit_document" in system:
        return {
            "edits": [
                {"op": "add", "after": None, "text": f"- [{n['day']}] {n['text']}", "notes": [n["id"]]}
                for n in NOTE_LINE.finditer(prompt.split("<notes>")[1])
            ]
        }
    document = re.search(r"<document>\n(.*)\n</document>", prompt, re.S).group(1)
    notes = re.search(r"<notes>\n(.*)\n</notes>", prompt, re.S).group(1)
    base = "" if document.startswith("(empty") else document + "\n"
    return base + notes


@pytest.fixture
def model(monkeypatch):
    fake = FakeChatModel(reply=merge)
    scripted_models().fold = fake
    return fake


def night_context(*, remaining_ms: int = 900_000, function_name: str = "ConsolidateFunction") -> LambdaContext:
    """The consolidation functions' Lambda context: 15 minutes and 1 GB, as template.yaml gives them."""
    return LambdaContext(function_name=function_name, remaining_ms=remaining_ms, memory_limit_in_mb=1024)


def consolidate(at: datetime = RUN_AT, *, context: LambdaContext | None = None, run_id: str | None = None) -> dict:
    event = event_body("scheduled")
    event["time"] = iso(at).replace(".000", "")
    if run_id:
        event["id"] = run_id
    return load_handler("ConsolidateFunction")(event, context or night_context())


def notes_of(aws, scope: Scope = PERSONAL) -> list[dict]:
    return aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        ExpressionAttributeValues={":p": {"S": scope.key}, ":n": {"S": "note#"}},
    )["Items"]


def folded_counts(aws, scope: Scope = PERSONAL) -> dict[str, int]:
    """How many document versions folded each note: exactly once is the invariant."""
    store = DocumentStore(aws, "MemoryTable")
    counts: dict[str, int] = {}
    for version in range(1, store.current(scope, consistent=True).version + 1):
        item = aws.get_item(
            TableName="MemoryTable", Key={"pk": {"S": scope.key}, "sk": {"S": f"doc#v#{version:010d}"}}
        )["Item"]
        for note_id in item.get("folded_note_ids", {}).get("L", []):
            counts[note_id["S"]] = counts.get(note_id["S"], 0) + 1
    return counts


def days_ago(days: float) -> datetime:
    return RUN_AT - timedelta(days=days)


class WorkerFunction:
    """ConsolidateWorkerFunction as Lambda runs it: one SQS event, its answer."""

    def __call__(self, event: dict) -> dict:
        return load_handler("ConsolidateWorkerFunction")(
            event, night_context(function_name="ConsolidateWorkerFunction")
        )


class RecordingQueue:
    """A fake of the consolidation queue (``consolidation.queue.GroupQueue``), named so and provided to the graph
    as its ``consolidation_queue``: it keeps each batch the planner hands it, sending nothing; with ``fail_with``
    it raises that instead, as the queue does once it has refused a batch three times."""

    def __init__(self) -> None:
        self.batches: list[list[GroupMessage]] = []
        self.fail_with: Exception | None = None

    def send(self, batch: list[GroupMessage]) -> int:
        if self.fail_with is not None:
            raise self.fail_with
        self.batches.append(list(batch))
        return len(batch)


class Died(BaseException):
    """The function dying between two steps (a timeout, an out-of-memory): nothing after it runs."""


def die_at_the_save() -> Crash:
    """The function dies as its fold's version is sent (``update_memory``'s write), before it applies: after the
    model's call, nothing saved. A crash point at the storage client, provided to the graph (``crash_at``)."""
    return crash_at("transact_write_items", saving_a_version, times=10**6, error=Died("update_memory"))


def die_at_the_mark(*, after_marks: int = 0) -> Crash:
    """The function dies at its ``after_marks + 1``-th note's mark (``ConsolidationStore.mark_consolidated``)."""
    return crash_at(
        "update_item", updating("SET consolidated"), nth=after_marks + 1, times=10**6, error=Died("mark_consolidated")
    )
