"""``make backfill-due``: once, when upgrading a deployment from per-note index entries to the per-scope
due markers (docs/consolidation.md "Upgrading a deployment"). Every note still indexed on its own makes its
scope due and leaves the index; the nightly planner then sees those scopes. Safe to run again.

It uses the service's settings (``MEMORY_TABLE_NAME``; AWS credentials from the standard chain). With
``AWS_ENDPOINT_URL_DYNAMODB`` set (the local stack's DynamoDB), the local stack's fake credentials apply.
"""

from __future__ import annotations

import os

from agent_memory.basics.settings import get_settings
from agent_memory.storage.client import make_dynamodb_client
from agent_memory.storage.due_scopes import DueScopes
from local.environment import LOCAL_ENVIRONMENT


def main() -> int:
    if os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):  # the local stack's DynamoDB: its fake credentials and region
        for name, value in LOCAL_ENVIRONMENT.items():
            if name.startswith("AWS_"):
                os.environ.setdefault(name, value)
    settings = get_settings()
    moved = DueScopes(make_dynamodb_client(settings), settings.table_name).backfill_legacy()
    print(f"notes moved from per-note index entries to their scopes' due markers: {moved}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
