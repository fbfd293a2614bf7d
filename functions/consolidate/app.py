"""ConsolidateFunction: the nightly EventBridge schedule's target (docs/api.md §4). It folds week-old notes
into each scope's document and returns the run's counts; the run's "now" is the event's ``time``."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.events import scheduled_run

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return services().planner.run(scheduled_run(event), remaining_ms=context.get_remaining_time_in_millis)
