"""ToolsFunction: the tools the chat backend calls on the model's behalf, the tool list and the health check
(their routes: ``agent_memory.edges.routes.tools``)."""

from __future__ import annotations

from agent_memory.basics.settings import require_valid_settings
from agent_memory.bootstrap import services
from agent_memory.edges.http import api_function
from agent_memory.edges.routes import tools
from agent_memory.recall.index_check import require_matching_index

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line
require_matching_index(services().notes_index)  # vectors of another size than the index's fail it too

app, lambda_handler = api_function(tools.router)
