"""ManagementFunction: the dashboard's API (docs/api.md §5), behind the HTTP API's JWT authorizer.

Refusals come in the contract's order: who is calling (401) and whether they may touch this memory
(403) are settled by the resolver before routing, from the token and the class of the route
(``edges.callers``: a member's, with the path's workspace, or an operator's); then the dashboard's reading of
the request's parts (``DASHBOARD_READING``: 415, 422); only then does the resolver validate the parameters and
the route its body (422), and the operation look for what was asked (404).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.basics.observability import logger, metrics
from agent_memory.basics.settings import require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.http import make_resolver
from agent_memory.edges.requests.reading import DASHBOARD_READING
from agent_memory.edges.routes import admin, memory, people
from agent_memory.recall.index_check import require_matching_index

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line
require_matching_index(services().notes_index)  # vectors of another size than the index's fail it too

app = make_resolver(
    memory.router,  # the document and the notes, personal and team (docs/api.md §5)
    people.router,  # export, erase, injections, usage (docs/api.md §6)
    admin.router,  # consolidation runs, for operators
    reading=DASHBOARD_READING,
    enable_validation=True,
)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
