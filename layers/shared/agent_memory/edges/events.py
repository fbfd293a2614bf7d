"""The Lambda events' adapters: each trigger's raw event turned into the typed command its use case takes
(``agent_memory.domain.commands``). A handler in ``functions/*/app.py`` adapts, then calls the use case.

- FlushFunction's direct invoke: ``flush_command`` (refusals are ``MemoryServiceError``, answered ``failed``).
- IndexerFunction's DynamoDB stream record: ``note_change`` (None for an item that is not a note).
- ConsolidateFunction's EventBridge scheduled event: ``scheduled_run``.
- ConsolidateWorkerFunction's SQS record: ``queued_group`` (its model ``QueuedGroupRecord``).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
    DynamoDBRecordEventName,
)
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from pydantic import BaseModel, ConfigDict, Json, field_validator

from agent_memory.domain.commands import FlushCommand, GroupMessage, NoteChange, QueuedGroup, ScheduledRun
from agent_memory.domain.notes import Origin, note_id
from agent_memory.domain.scope import Scope, bind_scope
from agent_memory.edges.requests import parse_flush_request
from agent_memory.storage.keys import NOTE_PREFIX, parse_note_sk
from agent_memory.storage.note_items import note_from_item


class MalformedStreamRecord(ValueError):
    """A stream record without the keys or the image the indexer needs (reported as a failed record)."""


def flush_command(event: object) -> FlushCommand:
    """The compaction event, validated (docs/api.md §4) and its scope bound; raises ``MemoryServiceError``."""
    request = parse_flush_request(event)
    context = request.context
    return FlushCommand(
        scope=bind_scope(context),
        origin=Origin(context.user_id, context.thread_id, request.compaction_id),
        messages=tuple((message.role, message.content) for message in request.messages),
    )


def note_change(record: DynamoDBRecord) -> NoteChange | None:
    """What the record says of a note; None for every other item of the table (not an error)."""
    stream = record.dynamodb
    keys: dict[str, Any] = stream.raw_event.get("Keys", {}) if stream is not None else {}
    try:
        scope_key, sort_key = keys["pk"]["S"], keys["sk"]["S"]
    except KeyError:
        raise MalformedStreamRecord(f"stream record {record.event_id} has no pk/sk keys") from None
    if not sort_key.startswith(NOTE_PREFIX):
        return None
    assert stream is not None  # keys were found in it
    sequence = str(stream.sequence_number)
    if record.event_name is DynamoDBRecordEventName.REMOVE:
        return NoteChange(sequence, scope_key, note_id(*parse_note_sk(sort_key)), None)
    image = stream.raw_event.get("NewImage")
    if not image:
        raise MalformedStreamRecord(f"stream record {record.event_id} ({record.event_name}) has no new image")
    try:
        note = note_from_item(image)
    except (KeyError, ValueError) as error:
        raise MalformedStreamRecord(f"stream record {record.event_id}: not a note image ({error!r})") from None
    old_image = stream.raw_event.get("OldImage") or {}
    same_text = record.event_name is DynamoDBRecordEventName.MODIFY and old_image.get("text") == image.get("text")
    unchanged = same_text and _indexed(old_image) == _indexed(image)
    return NoteChange(sequence, scope_key, note.id, note, same_text=same_text, unchanged=unchanged)


# What the notes index holds of a note besides its text (search.notes_index): a MODIFY that changes none of
# these (the table's own vector or write id) asks nothing of the index.
_INDEXED_ATTRIBUTES = ("day", "position", "created_at", "consolidated")


def _indexed(image: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(image.get(name) for name in _INDEXED_ATTRIBUTES)


MAX_MIN_AGE_DAYS = 3650  # a run started by hand folds notes at least this young at most: ten years


def scheduled_run(event: object) -> ScheduledRun:
    """The run's id (the event's ``id``, else a new one), its "now" (the event's ``time``) and the minimum age
    of its notes when ``detail.min_age_days`` names one (a run started by hand); raises ValueError."""
    if not isinstance(event, dict) or not isinstance(event.get("time"), str):
        raise ValueError("the event has no `time`; a consolidation run needs the scheduled event")
    instant = datetime.fromisoformat(event["time"].replace("Z", "+00:00"))
    if instant.tzinfo is None:
        raise ValueError("the event's `time` must carry a UTC offset")
    detail = event.get("detail")
    min_age = detail.get("min_age_days") if isinstance(detail, dict) else None
    if min_age is not None and (type(min_age) is not int or not 0 <= min_age <= MAX_MIN_AGE_DAYS):
        raise ValueError(f"the event's `detail.min_age_days` must be a whole number from 0 to {MAX_MIN_AGE_DAYS}")
    run_id = str(event.get("id") or uuid.uuid4())
    return ScheduledRun(run_id=run_id, now=instant.astimezone(UTC), min_age_days=min_age)


class GroupBody(BaseModel):
    """A queue message's body as the planner writes it (``GroupMessage.body``); anything else is poisoned."""

    model_config = ConfigDict(extra="forbid", strict=True)

    run_id: str
    run: str
    scope: str
    cutoff: str
    notes: int

    @field_validator("scope")
    @classmethod
    def _written_by_this_service(cls, key: str) -> str:
        try:
            Scope.from_key(key)
        except StopIteration:
            raise ValueError(f"not a scope key: {key!r}") from None
        return key


class QueuedGroupRecord(SqsRecordModel):
    """One record of ConsolidateWorkerFunction's batch; a record this model refuses is reported as failed."""

    body: Json[GroupBody]  # Powertools' documented way to type an SQS body


def queued_group(record: QueuedGroupRecord) -> QueuedGroup:
    body = record.body
    return QueuedGroup(
        record.messageId,
        int(record.attributes.ApproximateReceiveCount),
        GroupMessage(body.run_id, body.run, body.scope, body.cutoff, body.notes),
    )
