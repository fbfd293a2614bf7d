"""Export and erase through the management routes, and the partitions they leave."""

from __future__ import annotations

from tests.support.management import USER, manage
from tests.support.scopes import private


def get(path, token=USER, query=None):
    return manage("personal_document", path=path, token=token, query=query)


def delete(path, token=USER, query=None):
    return manage("personal_delete_note", path=path, token=token, query=query)


def partition(aws, scope):
    items = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": scope.key}},
    )["Items"]
    return [item["sk"]["S"] for item in items]


def export_all(base="/v1/memory/personal", token=USER):
    pages, cursor = [], None
    while True:
        answer = get(f"{base}/export", token, {"cursor": cursor} if cursor else None)
        assert answer.status == 200, answer.body
        pages.append(answer.body)
        cursor = answer.body["next_cursor"]
        if cursor is None:
            return pages


def fill(call, scope_context=None, notes=3, versions=2):
    context = scope_context or private()
    for number in range(notes):
        assert call("remember", {"context": context, "arguments": {"text": f"fact {number}"}}).status == 201
    for number in range(versions):
        update = {"context": context, "arguments": {"content": f"# Memory v{number + 1}"}}
        assert call("update_memory", update).status == 200


def erasable(aws, scope):
    """What an erase of the scope counts, by kind: every item but the document's head."""
    counts = {"notes": 0, "versions": 0, "other": 0}
    for sk in partition(aws, scope):
        if sk != "doc":
            counts["notes" if sk.startswith("note#") else "versions" if sk.startswith("doc#v#") else "other"] += 1
    return counts
