"""``make backfill-vectors``: once, when a deployment's table gains its vector index (docs/deploying.md "Upgrading
to the table's vector index"). Every note that carries its stored vector (``vec``) of the configured model gets
its indexed vector (``note_items.vector_item``: the same int8 components as numbers, no embedding call), which the
index then takes in. Notes without a vector keep none: the vector fill (``make reindex SCOPES=...``) embeds them.
Safe to run again: it writes the same items.

One paged Scan of the table, filtered to the notes with a vector (``pk``, ``sk`` and ``vec`` read): a one-off
migration reads every note once; the service itself never scans. It uses the service's settings
(``MEMORY_TABLE_NAME``, ``MEMORY_EMBEDDING_MODEL``, ``MEMORY_EMBEDDING_DIMENSIONS``; AWS credentials from the
standard chain). With ``AWS_ENDPOINT_URL_DYNAMODB`` set (the local stack's DynamoDB), its fake credentials apply.
"""

from __future__ import annotations

from typing import Any

from agent_memory.basics.settings import get_settings
from agent_memory.domain.scope import Scope
from agent_memory.search.vectors import index_components, model_tag
from agent_memory.storage.client import DynamoDB, make_dynamodb_client
from agent_memory.storage.keys import NOTE_PREFIX, parse_note_sk
from agent_memory.storage.note_items import vector_item
from local.environment import local_credentials

_BATCH = 25  # BatchWriteItem's most


def backfill_vectors(client: Any, table: str, *, tag: int, dimensions: int) -> tuple[int, int]:
    """Write the indexed vector of every note whose ``vec`` is of model ``tag``; answers (written, skipped: a vector
    of another model or longer than the index's)."""
    client = DynamoDB(client)
    request: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": "begins_with(sk, :notes) AND attribute_exists(vec)",
        "ExpressionAttributeValues": {":notes": {"S": NOTE_PREFIX}},
        "ProjectionExpression": "pk, sk, vec",
    }
    written = skipped = 0
    while True:
        page = client.scan(**request)
        puts = []
        for item in page["Items"]:
            numbers = index_components(item["vec"]["B"], tag=tag, dimensions=dimensions)
            if numbers is None:
                skipped += 1
                continue
            puts.append(vector_item(Scope.from_key(item["pk"]["S"]), *parse_note_sk(item["sk"]["S"]), numbers))
        for start in range(0, len(puts), _BATCH):
            batch: dict[str, Any] = {table: [{"PutRequest": {"Item": put}} for put in puts[start : start + _BATCH]]}
            while batch:
                batch = client.batch_write_item(RequestItems=batch).get("UnprocessedItems") or {}
        written += len(puts)
        if "LastEvaluatedKey" not in page:
            return written, skipped
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def main() -> int:
    local_credentials()  # against the local stack's DynamoDB: its fake credentials and region
    settings = get_settings()
    if settings.embedding_model is None or settings.opensearch_endpoint is not None:
        raise SystemExit("the table holds no vectors: set MEMORY_EMBEDDING_MODEL (and no OPENSEARCH_ENDPOINT)")
    tag = model_tag(settings.embedding_model, settings.embedding_dimensions)
    client = make_dynamodb_client(settings)
    written, skipped = backfill_vectors(client, settings.table_name, tag=tag, dimensions=settings.embedding_dimensions)
    print(f"indexed vectors written: {written}; notes whose vector is of another model (make reindex): {skipped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
