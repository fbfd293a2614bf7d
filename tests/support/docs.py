"""What the docs' examples hold: their code blocks and the client method of each route."""

from __future__ import annotations

import re

from agent_memory_client import ManagementClient, MemoryClient, PlatformOperations

from local.template import ROOT

DEPLOYING = (ROOT / "docs" / "deploying.md").read_text()


# SAM CLI's own reading of parameter_overrides: Key=value or Key="value with spaces", separated by spaces.
OVERRIDE = re.compile(r'([A-Za-z0-9]+)=("(?:\\.|[^"\\])*"|[^ "]+)')


# Each route of template.yaml and the client method that calls it.
CLIENT_METHODS = {
    "GET /v1/health": MemoryClient.health,
    "GET /v1/tools": MemoryClient.list_tools,
    "POST /v1/tools/remember": MemoryClient.remember,
    "POST /v1/tools/update_memory": MemoryClient.update_memory,
    "POST /v1/tools/recall": MemoryClient.recall,
    "POST /v1/context": MemoryClient.get_context,
    "POST /v1/extract": MemoryClient.extract,
    "GET {base}/document": ManagementClient.get_document,
    "PUT {base}/document": ManagementClient.put_document,
    "GET {base}/document/provenance": ManagementClient.get_provenance,
    "GET {base}/document/versions": ManagementClient.list_versions,
    "GET {base}/document/versions/{version}": ManagementClient.get_version,
    "POST {base}/document/versions/{version}/restore": ManagementClient.restore_version,
    "GET {base}/notes": ManagementClient.list_notes,
    "GET {base}/notes/search": ManagementClient.search_notes,
    "DELETE {base}/notes/{note_id}": ManagementClient.delete_note,
    "GET /v1/admin/consolidation/runs": ManagementClient.list_runs,
    "POST /v1/admin/consolidation/runs": ManagementClient.start_run,
    "GET {base}/export": ManagementClient.export,
    "DELETE {base}": ManagementClient.erase,
    "DELETE {base}/notes": ManagementClient.erase_my_notes,
    "GET {base}/injections": ManagementClient.list_injections,
    "GET {base}/usage": ManagementClient.usage,
    "GET {base}/context": ManagementClient.agent_view,
    "GET /v1/platform/users/{user_id}/export": PlatformOperations.export,
    "DELETE /v1/platform/users/{user_id}": PlatformOperations.erase,
    "GET /v1/platform/users/{user_id}/usage": PlatformOperations.usage,
    "GET /v1/platform/workspaces/{workspace_id}/export": PlatformOperations.export,
    "DELETE /v1/platform/workspaces/{workspace_id}": PlatformOperations.erase,
    "GET /v1/platform/workspaces/{workspace_id}/usage": PlatformOperations.usage,
    "POST /v1/platform/users/{user_id}/import": PlatformOperations.import_notes,
    "POST /v1/platform/workspaces/{workspace_id}/import": PlatformOperations.import_notes,
}


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DEPLOYING, flags=re.MULTILINE | re.DOTALL)
