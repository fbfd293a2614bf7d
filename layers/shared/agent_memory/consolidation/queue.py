"""The consolidation's queue: the planner sends one message per due scope, the worker folds one group per
message (docs/consolidation.md).

The worker's side is ``consolidation.worker``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory.domain.commands import GroupMessage

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
