"""ConsolidateWorkerFunction: the consolidation queue's target. Each message is one due scope of a run, folded by
the worker (``consolidation.delivery``, ``consolidation.worker``); Powertools' batch processor reports the messages
to deliver again (``ReportBatchItemFailures``). See docs/consolidation.md."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import get_settings, require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.consolidation.delivery import fold_queued
from agent_memory.edges.events import QueuedGroupRecord, queued_group

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line

processor = BatchProcessor(event_type=EventType.SQS, model=QueuedGroupRecord)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    settings = get_settings()

    def fold(record: QueuedGroupRecord) -> str:
        return fold_queued(
            services().worker,
            queued_group(record),
            max_receives=settings.consolidation_max_receives,
            claim_s=settings.consolidation_claim_s,
        )

    return process_partial_response(event=event, record_handler=fold, processor=processor, context=context)
