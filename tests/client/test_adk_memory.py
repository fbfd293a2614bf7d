"""The Google ADK memory service's search (docs/client.md "Google ADK"), in ADK's own virtualenv: what it sends."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.tool_venvs import adk_python

ROOT_DIR = Path(__file__).resolve().parents[2]
SEARCH = """
import asyncio, json
from agent_memory_client.adk_memory import AgentMemoryService

class RecordingMemory:
    queries = []
    def recall(self, context, query, k):
        self.queries.append(query)
        return {"notes": [], "mode": "keyword"}

memory = RecordingMemory()
asyncio.run(AgentMemoryService(memory).search_memory(app_name="a", user_id="u-1", query="units " * 500))
print(json.dumps(memory.queries))
"""


def test_a_search_longer_than_recall_takes_is_sent_cut_to_its_bound():
    """A model's query over recall's 2,000 characters (a 422 from the service) is cut, as the other integrations cut
    it: ADK's load_memory still finds notes instead of failing."""
    python = adk_python("the ADK path")
    env = {**os.environ, "PYTHONPATH": str(ROOT_DIR / "client")}
    done = subprocess.run([str(python), "-c", SEARCH], capture_output=True, text=True, env=env, timeout=120, check=True)

    assert json.loads(done.stdout) == [("units " * 500)[:2000]]
