"""ConsolidateWorkerFunction: the consolidation queue's target. Each message is one due scope of a run; the
worker folds its group through the exactly-once path and reports the messages to deliver again
(``ReportBatchItemFailures``). See docs/consolidation.md."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.consolidation_queue import handle_batch
from agent_memory.edges.events import queued_groups
from agent_memory.observability import logger, metrics
from agent_memory.runtime import consolidator
from agent_memory.settings import get_settings


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings = get_settings()
    return handle_batch(
        consolidator(),
        queued_groups(event),
        max_receives=settings.consolidation_max_receives,
        claim_s=settings.consolidation_claim_s,
    )
