"""The queue's group message is one model (``domain.commands.GroupMessage``): the body the planner writes is the
body the worker's batch reads, and anything else is refused there (reported, then dead-lettered)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agent_memory.domain.commands import GroupMessage
from agent_memory.edges.events import QueuedGroupRecord, queued_group
from local.sqs_mapping import sqs_record

QUEUE_ARN = "arn:aws:sqs:eu-west-1:123456789012:ConsolidationQueue"
MESSAGE = GroupMessage(run_id="r-1", run="run#2026-12-03#r-1", scope="user#u-1", cutoff="2026-11-26", notes=3)


def _record(body: str) -> QueuedGroupRecord:
    """One SQS record as Lambda's event source mapping hands it to ConsolidateWorkerFunction."""
    received = {
        "MessageId": "m-1",
        "ReceiptHandle": "h-1",
        "Body": body,
        "Attributes": {
            "ApproximateReceiveCount": "1",
            "ApproximateFirstReceiveTimestamp": "1764730800000",
            "SenderId": "AIDAEXAMPLE",
            "SentTimestamp": "1764730800000",
        },
    }
    return QueuedGroupRecord.model_validate(sqs_record(received, QUEUE_ARN, "eu-west-1"))


def test_the_body_the_planner_writes_is_the_message_the_worker_reads() -> None:
    assert queued_group(_record(MESSAGE.body())).message == MESSAGE


@pytest.mark.parametrize(
    "change",
    [{"extra": 1}, {"scope": "not-a-scope"}, {"notes": "3"}, {"run_id": None}],
    ids=["an unknown key", "not a scope key", "a count as text", "no run id"],
)
def test_a_body_the_planner_never_writes_is_refused(change: dict[str, object]) -> None:
    body = json.dumps({**json.loads(MESSAGE.body()), **change})

    with pytest.raises(ValidationError):
        _record(body)
