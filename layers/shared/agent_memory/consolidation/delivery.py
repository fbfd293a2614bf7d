"""One delivery of a consolidation queue message: its group folded by the worker (``consolidation.worker``),
through the exactly-once path (docs/consolidation.md).

ConsolidateWorkerFunction runs each record of its batch through Powertools' ``BatchProcessor`` with
``ReportBatchItemFailures``: a message whose group should be tried again (a model or storage fault, a crash)
raises here, is reported, and comes back after the visibility timeout; on its last receive
(``MEMORY_CONSOLIDATION_MAX_RECEIVES``, the queue's ``maxReceiveCount``) its failure is counted in the run,
and a message that still raises then goes to the dead-letter queue, its scope's notes unmarked and due again
the next night. A body that is not a group message fails its record's model and is dead-lettered alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.basics.observability import logger

if TYPE_CHECKING:
    from agent_memory.consolidation.worker import Worker
    from agent_memory.domain.commands import QueuedGroup


def fold_queued(worker: Worker, group: QueuedGroup, *, max_receives: int, claim_s: int) -> str:
    """Fold one message's group and answer its outcome; raises when the message is to be delivered again."""
    message = group.message
    outcome = worker.fold(message, group.message_id, final=group.receives >= max_receives, claim_s=claim_s)
    logger.info("consolidation group", extra={"scope": message.scope, "outcome": outcome, "receives": group.receives})
    return outcome
