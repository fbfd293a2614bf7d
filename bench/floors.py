"""The floors of the per-turn operations: the bare boto3 calls each route cannot do without, as it makes them.

A floor makes the same DynamoDB requests as its route (same items, conditions, projections and limits, on a
scope seeded alike), and nothing else, so the ratio of a route's latency to its floor's is what our own code
adds. ``bench.operations`` times each route against its floor; ``bench.people_context`` does over HTTP.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.runner import NOW_MS, TABLE, TODAY, document_text, fact_text


def context_floor(client: Any, pk: str, days: tuple[str, str], pool: ThreadPoolExecutor) -> Callable[[], object]:
    """The bare boto3 calls a turn cannot do without, as the route makes them: GetItem of the head on a pool
    thread while the calling thread Queries today's and yesterday's notes, then, once both have answered, the
    PutItem of the record of what the turn was shown (it records what they returned)."""
    from agent_memory.memory.service import RECENT_NOTES_QUERY_LIMIT
    from agent_memory.storage.keys import DOC_HEAD, INJECTION_PREFIX, notes_of_days

    low, high = notes_of_days(*days)
    key = {"S": pk}

    def floor() -> object:
        head = pool.submit(client.get_item, TableName=TABLE, Key={"pk": key, "sk": {"S": DOC_HEAD}})
        notes = client.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={":pk": key, ":low": {"S": low}, ":high": {"S": high}},
            ScanIndexForward=False,
            Limit=RECENT_NOTES_QUERY_LIMIT,
        )["Items"]
        version = head.result().get("Item", {}).get("version", {"N": "0"})
        at = NOW_MS
        return client.put_item(
            TableName=TABLE,
            Item={
                "pk": key,
                "sk": {"S": f"{INJECTION_PREFIX}{at}#{time.time_ns():020d}{uuid.uuid4().hex[:6]}"},
                "at": {"S": at},
                "thread_id": {"S": "t-1"},
                "document_version": version,
                "note_ids": {"L": [{"S": note["sk"]["S"]} for note in notes]},
                "expires_at": {"N": str(int(time.time()) + 30 * 86_400)},
                "user_id": {"S": pk.removeprefix("user#")},
            },
        )

    return floor


def remember_floor(client: Any, pk: str, thread_id: str) -> Callable[[int], object]:
    """The bare boto3 calls a note cannot do without, as ``remember`` makes them: the UpdateItem that takes the
    day's position (its quota and lost-answer conditions), the TransactWriteItems of the note with the scope's
    characters counter and due marker (with a ``ClientRequestToken``), then the Query of the newest notes' keys
    and text that the ``similar`` check reads. The transaction's items come from the stores' own builders, so
    the requests are the same to the byte but for ids; what the route adds is everything else (cleaning and
    redaction, the token's digest, the check's comparisons, the handler and its answer)."""
    from agent_memory.basics.settings import get_settings
    from agent_memory.domain.notes import Note, Origin
    from agent_memory.domain.scope import Scope
    from agent_memory.memory.service import SIMILAR_WINDOW
    from agent_memory.storage.keys import NOTE_PREFIX
    from agent_memory.storage.note_append import marker_item, position_take
    from agent_memory.storage.note_items import NoteText, note_item
    from agent_memory.storage.usage_store import CharsChange, Quota, chars_change_item

    settings = get_settings()
    quota = Quota(settings.quota_notes_per_day, settings.quota_chars)
    scope = Scope("personal", pk.removeprefix("user#"))
    origin = Origin(user_id=scope.owner_id, thread_id=thread_id)

    def floor(index: int) -> object:
        write_id = uuid.uuid4().hex
        counter = client.update_item(**position_take(TABLE, scope, TODAY, f"{write_id}.0", member=None, quota=quota))
        position = int(counter["Attributes"]["next_position"]["N"])
        text = fact_text(index).removeprefix("- ")
        note = Note(day=TODAY, position=position, text=text, created_at=NOW_MS, source="remember", origin=origin)
        put = {
            "TableName": TABLE,
            "Item": {**note_item(scope, note), "write_id": {"S": write_id}},
            "ConditionExpression": "attribute_not_exists(sk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        chars = chars_change_item(TABLE, scope, CharsChange(len(text), quota))
        marker = marker_item(TABLE, scope, created_at=NOW_MS, day=TODAY)
        client.transact_write_items(TransactItems=[{"Put": put}, chars, marker], ClientRequestToken=write_id)
        return client.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :notes)",
            ExpressionAttributeValues={":pk": {"S": pk}, ":notes": {"S": NOTE_PREFIX}},
            ProjectionExpression=NoteText.projection(vectors=False, threads=False),
            ExpressionAttributeNames={"#text": "text"},
            ScanIndexForward=False,
            Limit=SIMILAR_WINDOW + 1,
        )["Items"]

    return floor


def update_floor(client: Any, scope: Any, context: dict[str, Any]) -> Callable[[int], object]:
    """The bare boto3 calls a rewrite at a known version cannot do without, as ``update_memory`` makes them:
    past the kept history's 100 versions, the GetItem of the length of the version that leaves it (what the
    characters quota gets back); then one TransactWriteItems putting the new version and moving the head (both
    conditional), moving the characters counter and deleting the pruned version, with a ``ClientRequestToken``."""
    from agent_memory.basics.settings import get_settings
    from agent_memory.domain.document import HISTORY_VERSIONS
    from agent_memory.storage.keys import DOC_HEAD, version_sk
    from agent_memory.storage.usage_store import CharsChange, Quota, chars_change_item
    from agent_memory.storage.version_save import head_at

    settings = get_settings()
    quota = Quota(settings.quota_notes_per_day, settings.quota_chars)
    key = {"S": scope.key}

    def floor(index: int) -> object:
        write_id, version, content = uuid.uuid4().hex, index + 1, document_text(2000, index)
        prune = version - HISTORY_VERSIONS if version > HISTORY_VERSIONS else None
        pruned = 0
        if prune:
            item = client.get_item(
                TableName=TABLE,
                Key={"pk": key, "sk": {"S": version_sk(prune)}},
                ProjectionExpression="chars, content",
                ConsistentRead=True,
            ).get("Item", {})
            pruned = int(item.get("chars", {}).get("N", "0"))
        attributes = {
            "pk": key,
            "content": {"S": content},
            "chars": {"N": str(len(content))},
            "version": {"N": str(version)},
            "updated_at": {"S": NOW_MS},
            "reason": {"S": "tool"},
            "write_id": {"S": write_id},
            "by_user_id": {"S": context["user_id"]},
            "by_thread_id": {"S": context["thread_id"]},
        }
        version_put = {
            "TableName": TABLE,
            "Item": {**attributes, "sk": {"S": version_sk(version)}},
            "ConditionExpression": "attribute_not_exists(sk)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        items = [
            {"Put": version_put},
            {"Put": {"TableName": TABLE, "Item": {**attributes, "sk": {"S": DOC_HEAD}}, **head_at(index)}},
            chars_change_item(TABLE, scope, CharsChange(len(content) - pruned, quota)),
        ]
        if prune:
            items.append({"Delete": {"TableName": TABLE, "Key": {"pk": key, "sk": {"S": version_sk(prune)}}}})
        return client.transact_write_items(TransactItems=items, ClientRequestToken=write_id)

    return floor
