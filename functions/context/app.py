"""ContextFunction: the memory block injected before every chat turn (its route: ``agent_memory.edges.routes.
context``). Kept apart from the tools so that the per-turn path has its own concurrency, timeout and alarms."""

from __future__ import annotations

from agent_memory.basics.settings import require_valid_settings
from agent_memory.edges.http import api_function
from agent_memory.edges.routes import context

require_valid_settings()  # a setting the service cannot use fails the initialisation, with one line

app, lambda_handler = api_function(context.router)
