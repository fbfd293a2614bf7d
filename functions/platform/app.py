"""PlatformFunction: the chat backend's own data flows, export, erase and usage of a user or a workspace by id
(their routes: ``agent_memory.edges.routes.platform``), behind the HTTP API's IAM authorization. Their caller
is checked as the tools' is (``edges.callers``: the backend's role, never a dashboard token), then an id off
the pattern is refused, both before routing."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.http import make_resolver
from agent_memory.edges.routes import platform
from agent_memory.recall.index_check import require_matching_index

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line
require_matching_index(services().notes_index)  # vectors of another size than the index's fail it too

app = make_resolver(platform.router, enable_validation=True)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
