"""IndexerFunction: the table's stream carried into the notes index (inserts, the consolidated flag, removals).

Records go one by one through Powertools' batch processor: a failed record is reported in
``batchItemFailures`` (the mapping has ``ReportBatchItemFailures``) and only it and those after it are retried.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.observability import logger, metrics
from agent_memory.runtime import notes_indexer

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def record_handler(record: DynamoDBRecord) -> str:
    return notes_indexer().apply(record)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
