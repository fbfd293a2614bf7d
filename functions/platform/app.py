"""PlatformFunction: the chat backend's own data flows, export, erase and usage of a user or a workspace by id
(their routes: ``agent_memory.edges.routes.platform``), behind the HTTP API's IAM authorization; a dashboard
token, or an id off the pattern, is refused before routing."""

from __future__ import annotations

from agent_memory.basics.settings import require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.http import api_function
from agent_memory.edges.routes import platform
from agent_memory.recall.index_check import require_matching_index

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line
require_matching_index(services().notes_index)  # vectors of another size than the index's fail it too

app, lambda_handler = api_function(platform.router, enable_validation=True, refuse=platform.refuse_before_routing)
