"""The consolidation's queue, the planner's side: it sends the batches of group messages the planner makes
(docs/consolidation.md). The messages come back one at a time to ConsolidateWorkerFunction
(``consolidation.delivery``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory.domain.commands import GroupMessage

BATCH = 10  # SendMessageBatch's limit


class GroupQueue:
    def __init__(self, client: Any, url: str) -> None:
        self._client = client
        self._url = url

    def send(self, batch: list[GroupMessage]) -> int:
        """Send one batch of at most ``BATCH`` messages (the entries the queue refused are sent again, twice);
        returns how many were sent."""
        entries = [{"Id": str(i), "MessageBody": message.body()} for i, message in enumerate(batch)]
        for _ in range(3):
            answer = self._client.send_message_batch(QueueUrl=self._url, Entries=entries)
            failed = {entry["Id"] for entry in answer.get("Failed", [])}
            entries = [entry for entry in entries if entry["Id"] in failed]
            if not entries:
                return len(batch)
        raise RuntimeError(f"the queue refused {len(entries)} consolidation messages")
