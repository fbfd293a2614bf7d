"""FlushFunction: invoked directly (RequestResponse) by the chat backend just before it summarizes a
conversation. It always answers, within 5 seconds, and never raises (docs/api.md §4)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.errors import MemoryServiceError
from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.events import flush_command

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    service = services().flush_service
    try:
        command = flush_command(event)
    except MemoryServiceError as refusal:
        return service.refused(refusal)
    return service.flush(command)
