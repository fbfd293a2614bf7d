"""The Lambda events' adapters: each trigger's raw event turned into the typed command its use case takes
(``agent_memory.domain.commands``). A handler in ``functions/*/app.py`` adapts, then calls the use case.

- FlushFunction's direct invoke: ``flush_command`` (refusals are ``MemoryServiceError``, answered ``failed``).
- IndexerFunction's DynamoDB stream record: ``note_change`` (None for an item that is not a note).
- ConsolidateFunction's EventBridge scheduled event: ``scheduled_run`` (its model ``ScheduledEvent``).
- ConsolidateWorkerFunction's SQS record: ``queued_group`` (its model ``QueuedGroupRecord``).
"""

from __future__ import annotations

import uuid
from datetime import UTC
from typing import Any

from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
    DynamoDBRecordEventName,
)
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel, SqsRecordModel
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, Json, ValidationError, field_validator

from agent_memory.domain.commands import FlushCommand, GroupMessage, NoteChange, QueuedGroup, ScheduledRun
from agent_memory.domain.notes import Origin, note_id
from agent_memory.domain.scope import bind_scope
from agent_memory.edges.requests.chat import parse_flush_request
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


# What the notes index holds of a note besides its text (providers.notes_index): a MODIFY that changes none of
# these (the table's own vector or write id) asks nothing of the index.
_INDEXED_ATTRIBUTES = ("day", "position", "created_at", "consolidated")


def _indexed(image: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(image.get(name) for name in _INDEXED_ATTRIBUTES)


MAX_MIN_AGE_DAYS = 3650  # a run started by hand folds notes at least this young at most: ten years


class RunDetail(BaseModel):
    """The scheduled event's ``detail``: empty from the schedule; a run started by hand may name the notes' minimum
    age in days (other keys, such as the dashboard's ``requested_by``, are the sender's and never read)."""

    model_config = ConfigDict(extra="allow")

    min_age_days: int | None = Field(default=None, ge=0, le=MAX_MIN_AGE_DAYS, strict=True)


class ScheduledEvent(EventBridgeModel):
    """ConsolidateFunction's event: EventBridge's scheduled event (Powertools' model), its ``time`` an instant with
    its UTC offset. A run started by hand (the dashboard's run button, ``make consolidate``) is invoked directly
    with the same shape, less the ``account``, ``region`` and ``resources`` that only EventBridge fills in."""

    account: str = ""
    region: str = ""
    resources: list[str] = Field(default_factory=list)
    time: AwareDatetime
    detail: RunDetail

    @field_validator("time", mode="before")
    @classmethod
    def _an_instant_as_written(cls, value: object) -> object:
        if not isinstance(value, str):  # pydantic would read a number as seconds since 1970
            raise ValueError("must be an ISO 8601 instant with its UTC offset, such as 2026-12-03T03:00:00Z")
        return value


def scheduled_run(event: object) -> ScheduledRun:
    """The run's id (the event's ``id``, else a new one), its "now" (the event's ``time``) and the minimum age
    of its notes when ``detail.min_age_days`` names one (a run started by hand). A bad event raises ValueError
    naming each field it got wrong, in one line: the run does nothing."""
    try:
        scheduled = ScheduledEvent.model_validate(event)
    except ValidationError as error:
        wrong = "; ".join(f"`{'.'.join(map(str, e['loc'])) or 'the event'}`: {e['msg']}" for e in error.errors())
        raise ValueError(f"not a scheduled event, so no consolidation run: {wrong}") from None
    run_id = scheduled.id or str(uuid.uuid4())
    return ScheduledRun(run_id=run_id, now=scheduled.time.astimezone(UTC), min_age_days=scheduled.detail.min_age_days)


class QueuedGroupRecord(SqsRecordModel):
    """One record of ConsolidateWorkerFunction's batch; a record this model refuses is reported as failed."""

    body: Json[GroupMessage]  # Powertools' documented way to type an SQS body


def queued_group(record: QueuedGroupRecord) -> QueuedGroup:
    return QueuedGroup(record.messageId, int(record.attributes.ApproximateReceiveCount), record.body)
