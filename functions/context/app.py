"""ContextFunction: the memory block injected before every chat turn (its route: ``agent_memory.edges.routes.
context``). Kept apart from the tools so that the per-turn path has its own concurrency, timeout and alarms."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import require_valid_settings
from agent_memory.edges.http import make_resolver
from agent_memory.edges.routes import context as context_route

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line

app = make_resolver(context_route.router)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
