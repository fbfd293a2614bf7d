"""The consolidation queue and its event source mapping, locally (docs/consolidation.md).

``make run`` creates the queue and its dead-letter queue on the embedded moto (as ``template.yaml``
declares them: ``maxReceiveCount`` from the redrive policy, encrypted), points the planner at it, and a
poller delivers the messages to ConsolidateWorkerFunction like Lambda's SQS mapping: batches of
``BatchSize`` records with their ``ApproximateReceiveCount``; the records the function reports in
``batchItemFailures`` (or the whole batch, if it raises) stay on the queue and come back after the
visibility timeout, until moto moves them to the dead-letter queue. The visibility timeout is short
locally (``LOCAL_VISIBILITY_S``) so that a retried group does not wait half an hour on a laptop. The tests
use the same class on the in-process moto, and ``drain`` to run a consolidation to its end.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from local.environment import log
from local.poller import BackgroundPoller
from local.template import load_template

WORKER = "ConsolidateWorkerFunction"
LOCAL_VISIBILITY_S = 2


def _template_queue() -> tuple[int, int]:
    """``(BatchSize, maxReceiveCount)`` of the worker's mapping and the queue's redrive policy."""
    resources = load_template()["Resources"]
    events = resources[WORKER]["Properties"]["Events"]
    batch = int(events["Groups"]["Properties"].get("BatchSize", 10))
    receives = int(resources["ConsolidationQueue"]["Properties"]["RedrivePolicy"]["maxReceiveCount"])
    return batch, receives


def sqs_record(message: dict[str, Any], queue_arn: str, region: str) -> dict[str, Any]:
    """A received message (``AttributeNames=["All"]``) as Lambda's SQS event source hands it to a function."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {},
        "md5OfBody": message.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


class LocalQueueMapping(BackgroundPoller):
    """``invoke`` runs one SQS event through the worker and returns its answer (or raises)."""

    thread_name = "sqs-mapping"

    def __init__(
        self,
        endpoint: str | None,
        invoke: Callable[[dict[str, Any]], Any],
        *,
        visibility_s: int = LOCAL_VISIBILITY_S,
        name: str = "ConsolidationQueue",
    ) -> None:
        import boto3

        self._sqs = boto3.client("sqs", endpoint_url=endpoint)
        self._invoke = invoke
        self.batch_size, self.max_receives = _template_queue()
        dead = self._sqs.create_queue(QueueName=f"{name}DeadLetters", Attributes={"SqsManagedSseEnabled": "true"})
        self.dead_letter_url: str = dead["QueueUrl"]
        dead_arn = self._attribute(self.dead_letter_url, "QueueArn")
        redrive = {"deadLetterTargetArn": dead_arn, "maxReceiveCount": str(self.max_receives)}
        queue = self._sqs.create_queue(
            QueueName=name,
            Attributes={
                "VisibilityTimeout": str(visibility_s),
                "SqsManagedSseEnabled": "true",
                "RedrivePolicy": json.dumps(redrive),
            },
        )
        self.url: str = queue["QueueUrl"]
        self.arn = self._attribute(self.url, "QueueArn")
        super().__init__()

    def _attribute(self, url: str, name: str) -> str:
        value: str = self._sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[name])["Attributes"][name]
        return value

    def depth(self, url: str | None = None) -> int:
        """Messages on the queue, visible or in flight."""
        attributes = self._sqs.get_queue_attributes(
            QueueUrl=url or self.url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])

    def poll_once(self) -> int:
        """Receive what is visible and deliver it in batches; returns how many records were delivered."""
        answer = self._sqs.receive_message(
            QueueUrl=self.url, MaxNumberOfMessages=10, AttributeNames=["All"], WaitTimeSeconds=0
        )
        messages = answer.get("Messages", [])
        for start in range(0, len(messages), self.batch_size):
            self._deliver(messages[start : start + self.batch_size])
        return len(messages)

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        records = [sqs_record(message, self.arn, self._sqs.meta.region_name) for message in batch]
        try:
            answer = self._invoke({"Records": records})
            failed = {item["itemIdentifier"] for item in (answer or {}).get("batchItemFailures", [])}
        except Exception:  # noqa: BLE001 - the whole batch failed, as Lambda sees an error
            failed = {record["messageId"] for record in records}
        done = [record for record in records if record["messageId"] not in failed]
        if done:
            entries = [{"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(done)]
            self._sqs.delete_message_batch(QueueUrl=self.url, Entries=entries)

    def drain(self, timeout_s: float = 60.0, idle_s: float = 0.05) -> None:
        """Deliver until the queue is empty (failed messages come back after the visibility timeout)."""
        deadline = time.monotonic() + timeout_s
        while self.depth():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the consolidation queue still holds {self.depth()} messages")
            if not self.poll_once():
                time.sleep(idle_s)

    def run(self, interval_s: float = 0.2) -> None:
        while not self._stop.is_set():
            try:
                if not self.poll_once():
                    self._stop.wait(interval_s)
            except Exception as error:  # noqa: BLE001 - the poller outlives a hiccup of the queue
                log(f"consolidation queue: could not poll: {error}")
                self._stop.wait(interval_s)


def start_queue_mapping(endpoint: str, functions: Any) -> LocalQueueMapping:
    """On the embedded moto: the queue, the planner pointed at it, and the poller running."""
    import os

    os.environ.setdefault("AWS_ENDPOINT_URL_SQS", endpoint)
    mapping = LocalQueueMapping(endpoint, lambda event: functions.invoke(WORKER, event))
    os.environ["MEMORY_CONSOLIDATION_QUEUE_URL"] = mapping.url
    mapping.start()
    return mapping
