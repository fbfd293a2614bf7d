"""IndexerFunction: the table's stream carried into the notes index (inserts, the consolidated flag, removals).

Records go one by one through Powertools' batch processor, the adapter (``edges.events.note_change``) and
the batch, which stages them; the batch is then written in one bulk request. A failed record is reported
in ``batchItemFailures`` (the mapping has ``ReportBatchItemFailures``) and only it and those after it are
retried.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.events import note_change
from agent_memory.recall.index_check import require_matching_index

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line
require_matching_index(services().notes_index)  # vectors of another size than the index's fail it too

processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    batch = services().notes_indexer.batch(remaining_s=context.get_remaining_time_in_millis() / 1000)

    def stage(record: DynamoDBRecord) -> str:
        return batch.add(note_change(record))

    response = process_partial_response(event=event, record_handler=stage, processor=processor, context=context)
    # A record that failed in its adapter was never staged, so the two lists never share a record.
    response["batchItemFailures"] += [{"itemIdentifier": sequence} for sequence in batch.write()]
    return response
