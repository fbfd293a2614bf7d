"""The consolidation's queue: the planner sends one message per due scope, the worker folds one group per
message (docs/consolidation.md).

The worker is the queue's event source mapping target with ``ReportBatchItemFailures``: a message whose
group should be tried again (a model or storage fault, a crash) is reported and comes back after the
visibility timeout; on its last receive (``MEMORY_CONSOLIDATION_MAX_RECEIVES``, the queue's
``maxReceiveCount``) its failure is counted in the run, and a message that still raises then goes to the
dead-letter queue, its scope's notes unmarked and due again the next night.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from agent_memory.observability import logger

if TYPE_CHECKING:
    from agent_memory.commands import GroupMessage, QueuedGroup
    from agent_memory.consolidation import Consolidator

_BATCH = 10  # SendMessageBatch's limit


class GroupQueue:
    def __init__(self, client: Any, url: str) -> None:
        self._client = client
        self._url = url

    def send_all(self, messages: Iterable[GroupMessage]) -> int:
        """Send every message, ten per request; returns how many were sent. Holds one batch at a time."""
        sent = 0
        batch: list[GroupMessage] = []
        for message in messages:
            batch.append(message)
            if len(batch) == _BATCH:
                sent += self._send(batch)
                batch = []
        if batch:
            sent += self._send(batch)
        return sent

    def _send(self, batch: list[GroupMessage]) -> int:
        entries = [{"Id": str(i), "MessageBody": message.body()} for i, message in enumerate(batch)]
        for _ in range(3):
            answer = self._client.send_message_batch(QueueUrl=self._url, Entries=entries)
            failed = {entry["Id"] for entry in answer.get("Failed", [])}
            entries = [entry for entry in entries if entry["Id"] in failed]
            if not entries:
                return len(batch)
        raise RuntimeError(f"the queue refused {len(entries)} consolidation messages")


def handle_batch(
    consolidator: Consolidator, groups: Iterable[QueuedGroup], *, max_receives: int, claim_s: int
) -> dict[str, Any]:
    """Fold each message's group; the answer names the messages to deliver again (``batchItemFailures``)."""
    failures = []
    for group in groups:
        if group.message is None:  # not a group message: reported, so that the queue dead-letters it
            failures.append({"itemIdentifier": group.message_id})
            continue
        message, receives = group.message, group.receives
        try:
            outcome = consolidator.fold(message, group.message_id, final=receives >= max_receives, claim_s=claim_s)
            logger.info("consolidation group", extra={"scope": message.scope, "outcome": outcome, "receives": receives})
        except Exception:  # noqa: BLE001 - this record is delivered again (or dead-lettered); the batch goes on
            failures.append({"itemIdentifier": group.message_id})
    return {"batchItemFailures": failures}
