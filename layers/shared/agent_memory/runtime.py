"""Wiring: the process-wide service, built on first use (never at import time) from the settings."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from agent_memory.clock import utc_now
from agent_memory.consolidation import Caps, Consolidator
from agent_memory.flush import FLUSH_BUDGET_S, FlushService
from agent_memory.management import Management
from agent_memory.observability import logger
from agent_memory.providers.chat import chat_model_from_settings
from agent_memory.recall import RecallService
from agent_memory.service import MemoryService
from agent_memory.settings import get_settings
from agent_memory.storage.client import bounded_client, make_dynamodb_client
from agent_memory.storage.consolidation_store import ConsolidationStore
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.flush_store import FlushStore
from agent_memory.storage.note_store import NoteStore
from agent_memory.storage.scope_index import ScopeIndex
from agent_memory.storage.stale_records import StaleRecords
from agent_memory.storage.usage_store import Quota

if TYPE_CHECKING:  # imported where used: a deployment without an index (or the indexer) never loads them
    from agent_memory.consolidation_queue import GroupQueue
    from agent_memory.idempotency import IdempotencyStore
    from agent_memory.indexer import NotesIndexer
    from agent_memory.injections import InjectionRecorder
    from agent_memory.people import People
    from agent_memory.providers.embedding import EmbeddingModel
    from agent_memory.scope import Scope
    from agent_memory.search.notes_index import NotesIndex
    from agent_memory.service import MemoryContext


@cache
def dynamodb() -> Any:
    """The bounded DynamoDB client the services share (boto3 clients are thread-safe, and each one built costs
    the cold start tens of milliseconds); the flush and the injection record have their own, tighter ones."""
    return make_dynamodb_client(get_settings())


@cache
def memory_service() -> MemoryService:
    """Clients are reused across invocations of a warm sandbox; the chat model is only built when needed."""
    settings = get_settings()
    client = dynamodb()
    return MemoryService(
        NoteStore(client, settings.table_name, quota(), vectors=note_vectors(settings.embedding_timeout_s)),
        DocumentStore(client, settings.table_name),
        chat_model=cache(lambda: chat_model_from_settings(settings, timeout_s=settings.chat_timeout_s)),
        redact_extra=settings.redact_extra,
    )


def quota() -> Quota:
    settings = get_settings()
    return Quota(
        notes_per_day=settings.quota_notes_per_day,
        chars=settings.quota_chars,
        notes_per_member_day=settings.quota_notes_per_member_day,
    )


@cache
def idempotency() -> IdempotencyStore:
    """The records of ``Idempotency-Key`` (docs/api.md §6), beside each scope's data."""
    from agent_memory.idempotency import IdempotencyStore

    settings = get_settings()
    return IdempotencyStore(dynamodb(), settings.table_name)


@cache
def flush_service() -> FlushService:
    """The flush gets its own, tighter clients: its whole answer must fit in 5 seconds."""
    settings = get_settings()
    client = make_dynamodb_client(settings, connect_timeout_s=0.3, read_timeout_s=0.5, max_attempts=2)
    return FlushService(
        NoteStore(client, settings.table_name, quota(), vectors=note_vectors(FLUSH_VECTOR_BUDGET_S)),
        FlushStore(client, settings.table_name),
        chat_model=cache(lambda: chat_model_from_settings(settings, timeout_s=FLUSH_BUDGET_S)),
        enabled=settings.memory_flush,
        redact_extra=settings.redact_extra,
    )


@cache
def consolidator() -> Consolidator:
    """The nightly run folds through the same service (and so the same validated write path) as the tools."""
    settings = get_settings()
    client = dynamodb()
    return Consolidator(
        memory_service(),
        ConsolidationStore(client, settings.table_name),
        ScopeIndex(client, settings.table_name),
        chat_model=cache(lambda: chat_model_from_settings(settings, timeout_s=settings.chat_timeout_s)),
        caps=Caps(
            min_age_days=settings.consolidation_min_age_days,
            max_groups=settings.consolidation_max_groups,
            max_notes=settings.consolidation_max_notes,
            max_chars=settings.consolidation_max_chars,
        ),
        concurrency=settings.consolidation_concurrency,
        reserve_s=settings.consolidation_reserve_s,
        queue=cache(consolidation_queue),
    )


def consolidation_queue() -> GroupQueue | None:
    """The queue the planner fans the night's groups out to (``MEMORY_CONSOLIDATION_QUEUE_URL``), if any."""
    settings = get_settings()
    if settings.consolidation_queue_url is None:
        return None
    from agent_memory.consolidation_queue import GroupQueue

    return GroupQueue(bounded_client("sqs", settings), settings.consolidation_queue_url)


@cache
def management() -> Management:
    settings = get_settings()
    return Management(
        memory_service(),
        ConsolidationStore(dynamodb(), settings.table_name),
        lambda_client=bounded_client("lambda", settings),  # starting a run is one asynchronous Invoke
        consolidate_function=settings.consolidate_function,
        stale=StaleRecords(dynamodb(), settings.table_name),
    )


@cache
def people() -> People:
    """Export, erase and usage (the management function); the index, when configured, is cleared by the erase."""
    from agent_memory.people import People
    from agent_memory.storage.scope_items import ScopeItems

    settings = get_settings()
    client = dynamodb()
    return People(
        ScopeItems(client, settings.table_name),
        DocumentStore(client, settings.table_name),
        NoteStore(client, settings.table_name, quota=quota()),
        index=notes_index(),
        quota=quota(),
    )


@cache
def injection_recorder() -> InjectionRecorder:
    """The per-turn record's writer: its own session and client (used from its thread only: boto3 sessions are
    not thread-safe), bounded tighter still, since it runs behind the turn."""
    import boto3
    from botocore.config import Config

    from agent_memory.injections import InjectionRecorder

    settings = get_settings()
    config = Config(connect_timeout=0.5, read_timeout=1.0, retries={"mode": "standard", "total_max_attempts": 2})
    client = boto3.session.Session().client("dynamodb", config=config)
    return InjectionRecorder(client, settings.table_name, ttl_days=settings.injection_ttl_days)


def record_injection(scope: Scope, thread_id: str, memory: MemoryContext, user_id: str | None = None) -> None:
    """Queue the record of what this turn was shown; never raises (a turn is never failed by its record)."""
    from agent_memory.injections import Injection

    try:
        injection_recorder().record(
            Injection(
                scope,
                utc_now(),
                thread_id,
                memory.document.version,
                [note.id for note in memory.recent_notes],
                user_id=user_id,
            )
        )
    except Exception:  # noqa: BLE001 - best effort by design (agent_memory.injections)
        logger.exception("could not queue the injection record")


@cache
def recall_service() -> RecallService:
    """Recall reads notes with the same bounded client as the other tools, and the index, the embedding
    model and the reranking model when they are configured."""
    from agent_memory.providers.rerank import rerank_stage_from_settings  # boto3's client only when it is set

    settings = get_settings()
    notes = NoteStore(dynamodb(), settings.table_name)
    return RecallService(
        notes,
        index=notes_index(),
        embedder=embedding_model(),
        keyword_weight=settings.recall_keyword_weight,
        vector_tag=table_vector_tag(),
        reranker=rerank_stage_from_settings(settings),
    )


# The flush answers within 5 s, most of it the chat model's: its note's vector gets at most this much.
FLUSH_VECTOR_BUDGET_S = 1.0


def table_vector_tag() -> int | None:
    """The tag of the vectors notes carry in the table (docs/api.md §6: an embedding model and no notes index),
    else None: without an index, recall compares the query with them; with one, the index holds them."""
    settings = get_settings()
    if settings.embedding_model is None or settings.opensearch_endpoint is not None:
        return None
    from agent_memory.search.vectors import model_tag

    return model_tag(settings.embedding_model, settings.embedding_dimensions)


def note_vectors(timeout_s: float) -> Callable[[str], bytes | None] | None:
    """What writes a note's vector with it, when the table holds vectors (``table_vector_tag``)."""
    tag, embedder = table_vector_tag(), embedding_model()
    if tag is None or embedder is None:
        return None
    from agent_memory.search.vectors import NoteVectorWriter

    return NoteVectorWriter(embedder, tag=tag, timeout_s=min(timeout_s, get_settings().embedding_timeout_s))


@cache
def embedding_model() -> EmbeddingModel | None:
    """The embedding model, when ``MEMORY_EMBEDDING_MODEL`` is set; bounded by ``MEMORY_EMBEDDING_TIMEOUT_S``."""
    from agent_memory.providers.embedding import embedding_model_from_settings

    settings = get_settings()
    return embedding_model_from_settings(settings, timeout_s=settings.embedding_timeout_s)


@cache
def notes_index() -> NotesIndex | None:
    """The notes index, when ``OPENSEARCH_ENDPOINT`` is set; its client is built here, its requests made later."""
    settings = get_settings()
    if settings.opensearch_endpoint is None:
        return None
    from agent_memory.search.notes_index import NotesIndex, make_opensearch_client

    return NotesIndex(
        make_opensearch_client(settings.opensearch_endpoint, timeout_s=settings.opensearch_timeout_s),
        dimensions=settings.embedding_dimensions,
        shards=settings.opensearch_shards,
        replicas=settings.opensearch_replicas,
    )


@cache
def notes_indexer() -> NotesIndexer:
    """The stream indexer. Its index is ensured once per sandbox before the first write: written through
    a missing alias, OpenSearch would create a plain index named like the alias, with a guessed mapping."""
    from agent_memory.indexer import NotesIndexer

    index = notes_index()
    if index is None:
        raise RuntimeError("the stream indexer needs OPENSEARCH_ENDPOINT")
    index.ensure()
    return NotesIndexer(index, embedder=embedding_model())


def reset() -> None:
    """Forget the cached settings and services (tests and the local stack change the environment)."""
    dynamodb.cache_clear()
    memory_service.cache_clear()
    idempotency.cache_clear()
    flush_service.cache_clear()
    consolidator.cache_clear()
    management.cache_clear()
    people.cache_clear()
    injection_recorder.cache_clear()
    recall_service.cache_clear()
    notes_index.cache_clear()
    embedding_model.cache_clear()
    notes_indexer.cache_clear()
    get_settings.cache_clear()
