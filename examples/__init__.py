"""Runnable examples: a terminal chat agent with memory (``python -m examples.agent_chat``) and ``make demo``.

They run from a clone without installing the client: when ``agent_memory_client`` is not installed, the
clone's own ``client/`` folder is put on the path, so ``.venv/bin/python -m examples.agent_chat`` works as
written in the docs.
"""

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("agent_memory_client") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))
