"""``make backfill-due``: once, when upgrading a deployment from per-note index entries to the per-scope
due markers (docs/consolidation.md "Upgrading a deployment"). Every note still indexed on its own makes its
scope due and leaves the index; the nightly planner then sees those scopes. Safe to run again.

It uses the service's settings (``MEMORY_TABLE_NAME``; AWS credentials from the standard chain). With
``AWS_ENDPOINT_URL_DYNAMODB`` set (the local stack's DynamoDB), the local stack's fake credentials apply.
"""

from __future__ import annotations

from typing import Any

from agent_memory.basics.settings import get_settings
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB, make_dynamodb_client, query_pages
from agent_memory.storage.keys import DUE_UC_SK_PREFIX, UNCONSOLIDATED_INDEX, unconsolidated_shards
from agent_memory.storage.note_append import write_with_marker
from local.environment import local_credentials


def backfill_legacy(client: Any, table: str) -> int:
    """Each note still in the sparse index under its own ``uc_sk = <instant>#<scope>#<id>`` leaves it in the
    transaction that makes its scope due, as a note write does (``write_with_marker``). Safe to run again: a
    note already moved is no longer found. Answers how many notes were moved."""
    client = DynamoDB(client)
    moved = 0
    for shard in unconsolidated_shards():
        request: dict[str, Any] = {
            "TableName": table,
            "IndexName": UNCONSOLIDATED_INDEX,
            "KeyConditionExpression": "uc_pk = :shard AND uc_sk < :markers",  # instants sort before "due#"
            "ExpressionAttributeValues": {":shard": {"S": shard}, ":markers": {"S": DUE_UC_SK_PREFIX}},
            "ProjectionExpression": "pk, sk, created_at, #day",
            "ExpressionAttributeNames": {"#day": "day"},
        }
        for page in query_pages(client, request):
            for item in page["Items"]:
                scope = Scope.from_key(item["pk"]["S"])
                leave = {
                    "Update": {
                        "TableName": table,
                        "Key": {"pk": item["pk"], "sk": item["sk"]},
                        "UpdateExpression": "REMOVE uc_pk, uc_sk",
                    }
                }
                write_with_marker(
                    client, table, scope, [leave], created_at=item["created_at"]["S"], day=item["day"]["S"]
                )
                moved += 1
    return moved


def main() -> int:
    local_credentials()  # against the local stack's DynamoDB: its fake credentials and region
    settings = get_settings()
    moved = backfill_legacy(make_dynamodb_client(settings), settings.table_name)
    print(f"notes moved from per-note index entries to their scopes' due markers: {moved}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
