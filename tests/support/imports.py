"""Imports through PlatformFunction (events/platform/*_import.json with another body), and the notes they leave."""

from __future__ import annotations

import json
from typing import Any

from local.lambda_context import LambdaContext
from local.template import load_handler
from tests.support.calls import Answer
from tests.support.events import load_event


def post_import(kind: str, owner: str, body: Any, *, headers: dict[str, str] | None = None) -> Answer:
    """POST ``body`` (JSON, or a raw string as it is) to ``/v1/platform/<kind>/<owner>/import``."""
    singular = kind.removesuffix("s")
    event = load_event(f"platform/{singular}_import")
    event["rawPath"] = event["requestContext"]["http"]["path"] = f"/v1/platform/{kind}/{owner}/import"
    event["pathParameters"] = {f"{singular}_id": owner}
    event["body"] = body if isinstance(body, str) else json.dumps(body)
    event["headers"].update(headers or {})
    result = load_handler("PlatformFunction")(event, LambdaContext())
    return Answer(result["statusCode"], json.loads(result["body"]) if result.get("body") else None, result["headers"])


def notes_body(import_id: str, notes: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"import_id": import_id, "format": "notes/1", "notes": notes, **extra}


def stored_notes(aws: Any, pk: str) -> list[dict[str, Any]]:
    """The partition's notes, oldest first: day, position, text, created_at, source, consolidated."""
    items = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        ExpressionAttributeValues={":p": {"S": pk}, ":n": {"S": "note#"}},
    )["Items"]
    return [
        {
            "sk": item["sk"]["S"],
            "text": item["text"]["S"],
            "created_at": item["created_at"]["S"],
            "source": item["source"]["S"],
        }
        for item in items
    ]


# A platform's history, out of time order on purpose: an import writes them in created_at order.
HISTORY = [
    {"text": "Moved to Lisbon in the spring", "created_at": "2026-09-14T18:05:00+02:00"},
    {"text": "Prefers window seats on long flights", "created_at": "2026-09-02T08:30:00Z"},
    {"text": "Allergic to penicillin", "created_at": "2026-09-02T07:10:00Z"},
    {"text": "Training for the Porto half marathon", "created_at": "2026-12-03T08:00:00Z"},
]
# The receipt of HISTORY imported into an empty personal memory: each note on its own day, in time order.
HISTORY_RECEIPT = {
    "notes": [
        {"index": 2, "id": "2026-09-02.1"},
        {"index": 1, "id": "2026-09-02.2"},
        {"index": 0, "id": "2026-09-14.1"},
        {"index": 3, "id": "2026-12-03.1"},
    ],
    "skipped": [],
    "refused": [],
    "document_version": None,
}
