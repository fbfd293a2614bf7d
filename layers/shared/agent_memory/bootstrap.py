"""The composition root: ``bootstrap()`` builds the service's object graph from the settings, each part on first
use (never at import time), and takes any part already built as an argument: that is how tests hand in a fake
index, a faulty DynamoDB client or a scripted model, instead of patching a registry.

A Lambda sandbox (and the local stack) keeps one graph for the process, ``services()``, so warm invocations
reuse their clients; ``reset()`` forgets it when the environment changes (tests, the local stack's restarts).
Nothing but the edges and the handlers imports this module (``make lint``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, cached_property, partial
from typing import TYPE_CHECKING, Any

from agent_memory.basics.settings import Settings, get_settings
from agent_memory.consolidation.planner import Planner
from agent_memory.consolidation.worker import Caps, Worker
from agent_memory.memory.extraction import EXTRACTION_BUDGET_S, ExtractionService
from agent_memory.memory.flush import FLUSH_BUDGET_S, FlushService
from agent_memory.memory.management import Management
from agent_memory.memory.service import MemoryService
from agent_memory.providers.chat import ChatModels, ConfiguredChatModels, ModelUse
from agent_memory.recall.ranking import Tuning
from agent_memory.recall.service import RecallService
from agent_memory.storage.client import bounded_client, make_dynamodb_client
from agent_memory.storage.consolidation_store import ConsolidationStore
from agent_memory.storage.document_store import DocumentStore
from agent_memory.storage.due_markers import DueMarkers
from agent_memory.storage.extraction_store import ExtractionStore
from agent_memory.storage.flush_store import FlushStore
from agent_memory.storage.note_store import NoteStore
from agent_memory.storage.stale_records import StaleRecords
from agent_memory.storage.usage_store import Quota

if TYPE_CHECKING:  # imported where used: a deployment without an index (or the indexer) never loads them
    from agent_memory.consolidation.queue import GroupQueue
    from agent_memory.domain.scope import Scope
    from agent_memory.memory.importing import Importer
    from agent_memory.people.control import People
    from agent_memory.people.injections import TurnRecord
    from agent_memory.providers.embedding import EmbeddingModel
    from agent_memory.providers.notes_index import NotesIndex
    from agent_memory.providers.rerank import Reranker
    from agent_memory.recall.indexer import NotesIndexer
    from agent_memory.storage.idempotency_records import IdempotencyStore
    from agent_memory.storage.injection_records import InjectionRecorder
    from agent_memory.storage.vector_index import NoteVectorIndex

# The flush answers within 5 s, most of it the chat model's: its note's vector gets at most this much.
FLUSH_VECTOR_BUDGET_S = 1.0
# The nightly job has minutes, not a turn's seconds: a request it gives up on is sent again while the first may
# still be running, which costs DynamoDB a second attempt and, on an engine without isolation (plain moto,
# whose transactions copy the whole table), lets a cancelled retry restore its copy over what was written.
CONSOLIDATION_READ_TIMEOUT_S = 10.0


class Services:
    """One process's object graph. Each part is built on first use from the settings and the parts it needs,
    then kept; a part given to ``bootstrap()`` is used as it is. ``make_dynamodb_client`` builds every
    DynamoDB client of the graph (the shared one and the flush's tighter one)."""

    def __init__(
        self, settings: Settings, *, make_dynamodb_client: Callable[..., Any] = make_dynamodb_client, **given: Any
    ) -> None:
        self.settings = settings
        self.make_dynamodb_client = make_dynamodb_client
        for name, part in given.items():
            if not isinstance(getattr(type(self), name, None), cached_property):
                raise TypeError(f"bootstrap() builds no part named {name!r}")
            self.__dict__[name] = part  # where cached_property keeps what it built

    @cached_property
    def dynamodb(self) -> Any:
        """The bounded DynamoDB client the services share (boto3 clients are thread-safe, and each one built costs
        the cold start tens of milliseconds); the flush and the injection record have their own, tighter ones."""
        return self.make_dynamodb_client(self.settings)

    @property
    def quota(self) -> Quota:
        return Quota(
            notes_per_day=self.settings.quota_notes_per_day,
            chars=self.settings.quota_chars,
            notes_per_member_day=self.settings.quota_notes_per_member_day,
        )

    @cached_property
    def notes(self) -> NoteStore:
        """The notes, with the scope's characters counter their writes move (``notes.usage``)."""
        vectors = self.note_vectors(self.settings.embedding_timeout_s)
        return NoteStore(self.dynamodb, self.settings.table_name, self.quota, vectors=vectors, indexed=self.indexed())

    @cached_property
    def documents(self) -> DocumentStore:
        return DocumentStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def memory_service(self) -> MemoryService:
        return self._memory_service(self.notes, self.documents)

    def _memory_service(self, notes: NoteStore, documents: DocumentStore) -> MemoryService:
        """The chat model is only built when a compression needs it (``chat_models``)."""
        settings = self.settings
        return MemoryService(
            notes,
            documents,
            notes.usage,
            chat_model=lambda: self.chat_models("compression"),
            redact_extra=settings.redact_extra,
            vector_tag=self.table_vector_tag(),
        )

    @cached_property
    def chat_models(self) -> ChatModels:
        """The chat model of each use, made on its first need: the flush's within its 5-second answer, an
        extraction's within its 10 seconds, a compression's and the fold's within ``MEMORY_CHAT_TIMEOUT_S``."""
        turn_s = self.settings.chat_timeout_s
        budgets: dict[ModelUse, float] = {
            "compression": turn_s,
            "flush": FLUSH_BUDGET_S,
            "extraction": EXTRACTION_BUDGET_S,
            "fold": turn_s,
        }
        return ConfiguredChatModels(self.settings, budgets)

    @cached_property
    def idempotency(self) -> IdempotencyStore:
        """The records of ``Idempotency-Key`` (docs/api.md §6), beside each scope's data."""
        from agent_memory.storage.idempotency_records import IdempotencyStore

        return IdempotencyStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def flush_service(self) -> FlushService:
        """The flush gets its own, tighter clients: its whole answer must fit in 5 seconds."""
        settings = self.settings
        client = self.make_dynamodb_client(settings, connect_timeout_s=0.3, read_timeout_s=0.5, max_attempts=2)
        return FlushService(
            NoteStore(
                client,
                settings.table_name,
                self.quota,
                vectors=self.note_vectors(FLUSH_VECTOR_BUDGET_S),
                indexed=self.indexed(),
            ),
            FlushStore(client, settings.table_name),
            chat_model=lambda: self.chat_models("flush"),
            enabled=settings.memory_flush,
            extractive=settings.chat_model == "local:extractive",
            redact_extra=settings.redact_extra,
        )

    @cached_property
    def extraction_service(self) -> ExtractionService[dict[str, Any]]:
        """An extraction answers within 10 seconds: its own client waits less on storage than the tools' do, and
        each fact's vector gets at most ``FLUSH_VECTOR_BUDGET_S``, as the flush's note."""
        settings = self.settings
        client = self.make_dynamodb_client(settings, connect_timeout_s=0.5, read_timeout_s=1.0, max_attempts=2)
        return ExtractionService(
            NoteStore(client, settings.table_name, self.quota, vectors=self.note_vectors(FLUSH_VECTOR_BUDGET_S)),
            ExtractionStore(client, settings.table_name),
            chat_model=lambda: self.chat_models("extraction"),
            extractive=settings.chat_model == "local:extractive",
            redact_extra=settings.redact_extra,
            vector_tag=self.table_vector_tag(),
        )

    @cached_property
    def consolidation_dynamodb(self) -> Any:
        """The nightly run's own client (the planner's and the worker's), which waits longer on storage than a chat
        turn does (``CONSOLIDATION_READ_TIMEOUT_S``)."""
        settings = self.settings
        return self.make_dynamodb_client(
            settings, read_timeout_s=max(settings.dynamodb_read_timeout_s, CONSOLIDATION_READ_TIMEOUT_S)
        )

    @cached_property
    def consolidation_store(self) -> ConsolidationStore:
        """A scope's due notes, their marks, the pending-marks records and the runs, on the nightly run's client."""
        return ConsolidationStore(self.consolidation_dynamodb, self.settings.table_name)

    @cached_property
    def due_markers(self) -> DueMarkers:
        """The scopes' due markers: what the planner reads, what a worker claims and settles."""
        return DueMarkers(self.consolidation_dynamodb, self.settings.table_name)

    @property
    def consolidation_caps(self) -> Caps:
        settings = self.settings
        return Caps(
            min_age_days=settings.consolidation_min_age_days,
            max_groups=settings.consolidation_max_groups,
            max_notes=settings.consolidation_max_notes,
            max_chars=settings.consolidation_max_chars,
        )

    @cached_property
    def worker(self) -> Worker:
        """The consolidation's worker folds one group through the same validated write path as the tools, on the
        nightly run's client."""
        client, table = self.consolidation_dynamodb, self.settings.table_name
        documents = DocumentStore(client, table)
        return Worker(
            self._memory_service(NoteStore(client, table, self.quota), documents),  # it writes no note
            documents,
            self.consolidation_store,
            self.due_markers,
            chat_model=lambda: self.chat_models("fold"),
            caps=self.consolidation_caps,
            vector_tag=self.table_vector_tag(),
        )

    @cached_property
    def planner(self) -> Planner:
        """The nightly run's planner: it sends the groups to the queue, or has the worker fold them here."""
        return Planner(
            self.consolidation_store,
            self.due_markers,
            self.worker,
            self.consolidation_caps,
            concurrency=self.settings.consolidation_concurrency,
            reserve_s=self.settings.consolidation_reserve_s,
            queue=self.consolidation_queue,
        )

    @cached_property
    def consolidation_queue(self) -> GroupQueue | None:
        """The queue the planner fans the night's groups out to (``MEMORY_CONSOLIDATION_QUEUE_URL``), if any."""
        if self.settings.consolidation_queue_url is None:
            return None
        from agent_memory.consolidation.queue import GroupQueue

        return GroupQueue(bounded_client("sqs", self.settings), self.settings.consolidation_queue_url)

    @cached_property
    def management(self) -> Management:
        settings = self.settings
        return Management(
            self.memory_service,
            self.documents,
            self.notes,
            ConsolidationStore(self.dynamodb, settings.table_name),
            lambda_client=self.lambda_client,
            consolidate_function=settings.consolidate_function,
            stale=self.stale_records,
        )

    @cached_property
    def lambda_client(self) -> Any:
        """The dashboard's run button starts a consolidation with one asynchronous Invoke of this client."""
        return bounded_client("lambda", self.settings)

    @cached_property
    def stale_records(self) -> StaleRecords:
        """What a deleted note or an erase leaves behind, voided (the management and people use cases)."""
        return StaleRecords(self.dynamodb, self.settings.table_name)

    @cached_property
    def people(self) -> People:
        """Export, erase and usage (the management function); the index, when configured, is cleared by the erase."""
        from agent_memory.people.control import People
        from agent_memory.storage.scope_items import ScopeItems

        settings = self.settings
        return People(
            ScopeItems(self.dynamodb, settings.table_name),
            self.documents,
            self.notes,
            self.notes.usage,
            self.stale_records,
            index=self.notes_index,
            quota=self.quota,
            redact_extra=settings.redact_extra,
        )

    @cached_property
    def importer(self) -> Importer[dict[str, Any]]:
        """Import (the platform function): the notes' own write, the document's validated write."""
        from agent_memory.memory.importing import Importer
        from agent_memory.storage.import_records import ImportRecords

        settings = self.settings
        records = ImportRecords(self.dynamodb, settings.table_name)
        return Importer(self.notes, records, self.memory_service, redact_extra=settings.redact_extra)

    @cached_property
    def injection_recorder(self) -> InjectionRecorder:
        """The per-turn record's writer: its own client, bounded tighter still (the turn waits for it), built like
        every other (so a test's fault-injecting client reaches the record too)."""
        from agent_memory.storage.injection_records import InjectionRecorder

        client = self.make_dynamodb_client(self.settings, connect_timeout_s=0.5, read_timeout_s=1.0, max_attempts=2)
        return InjectionRecorder(client, self.settings.table_name, ttl_days=self.settings.injection_ttl_days)

    def turn_record(self, scope: Scope, thread_id: str, user_id: str | None = None) -> TurnRecord:
        """The record of what this turn is shown, to start once the turn knows it (``people.injections``).
        ``user_id``, the turn's user, is kept for an erase of their notes."""
        from agent_memory.people.injections import TurnRecord

        return TurnRecord(self.injection_recorder, scope, thread_id, user_id)

    @cached_property
    def rerank_model(self) -> Reranker | None:
        """The reranking model ``MEMORY_RERANK_MODEL`` names (None: unset), on its own bounded client."""
        from agent_memory.providers.rerank import rerank_model_from_settings  # boto3's client only when it is set

        return rerank_model_from_settings(self.settings)

    @cached_property
    def recall_notes(self) -> NoteStore:
        """The notes recall reads (its vectors and neighbours included), with the tools' bounded client: a part of
        its own, so that a test hands recall a store that leaks another scope's rows or fails."""
        return NoteStore(self.dynamodb, self.settings.table_name)

    @cached_property
    def recall_service(self) -> RecallService:
        """Recall reads notes with the same bounded client as the other tools, and the index, the embedding
        model and the reranking model when they are configured."""
        from agent_memory.providers.rerank import rerank_stage

        return RecallService(
            self.recall_notes,
            index=self.notes_index,
            embedder=self.embedding_model,
            tuning=Tuning(
                keyword_weight=self.settings.recall_keyword_weight,
                diversity_weight=self.settings.recall_diversity_weight,
                expansion_terms=self.settings.recall_expansion_terms,
                date_boost=self.settings.recall_date_boost,
                neighbours=self.settings.recall_neighbours,
                question_weight=self.settings.recall_question_weight,
            ),
            vector_tag=self.table_vector_tag(),
            reranker=rerank_stage(self.rerank_model, self.settings),
            vector_index=self.vector_index(),
        )

    def vector_index(self) -> NoteVectorIndex | None:
        """The table's vector index, where the table holds the vectors (``table_vector_tag``): template.yaml declares
        it on the table exactly then, and the local stack's table always has it."""
        if self.table_vector_tag() is None:
            return None
        from agent_memory.storage.vector_index import NoteVectorIndex

        return NoteVectorIndex(self.dynamodb, self.settings.table_name, dimensions=self.settings.embedding_dimensions)

    def indexed(self) -> Callable[[bytes], list[int] | None] | None:
        """The numbers the vector index reads of a note's stored vector (``search.vectors.index_components``),
        written beside it where the table holds vectors."""
        tag = self.table_vector_tag()
        if tag is None:
            return None
        from agent_memory.search.vectors import index_components

        return partial(index_components, tag=tag, dimensions=self.settings.embedding_dimensions)

    def table_vector_tag(self) -> int | None:
        """The tag of the vectors notes carry in the table (docs/api.md §6: an embedding model and no notes
        index), else None: without an index, recall compares the query with them; with one, the index holds them."""
        settings = self.settings
        if settings.embedding_model is None or settings.opensearch_endpoint is not None:
            return None
        from agent_memory.search.vectors import model_tag

        return model_tag(settings.embedding_model, settings.embedding_dimensions)

    def note_vectors(self, timeout_s: float) -> Callable[[str], bytes | None] | None:
        """What writes a note's vector with it, when the table holds vectors (``table_vector_tag``)."""
        tag, embedder = self.table_vector_tag(), self.embedding_model
        if tag is None or embedder is None:
            return None
        from agent_memory.providers.embedding import NoteVectorWriter

        return NoteVectorWriter(embedder, tag=tag, timeout_s=min(timeout_s, self.settings.embedding_timeout_s))

    @cached_property
    def embedding_model(self) -> EmbeddingModel | None:
        """The embedding model, when ``MEMORY_EMBEDDING_MODEL`` is set; bounded by ``MEMORY_EMBEDDING_TIMEOUT_S``."""
        from agent_memory.providers.embedding import embedding_model_from_settings

        return embedding_model_from_settings(self.settings, timeout_s=self.settings.embedding_timeout_s)

    @cached_property
    def notes_index(self) -> NotesIndex | None:
        """The notes index, when ``OPENSEARCH_ENDPOINT`` is set; its client is built here, its requests made later."""
        settings = self.settings
        if settings.opensearch_endpoint is None:
            return None
        from agent_memory.providers.notes_index import NotesIndex, make_opensearch_client

        return NotesIndex(
            make_opensearch_client(settings.opensearch_endpoint, timeout_s=settings.opensearch_timeout_s),
            dimensions=settings.embedding_dimensions,
            shards=settings.opensearch_shards,
            replicas=settings.opensearch_replicas,
        )

    @cached_property
    def notes_indexer(self) -> NotesIndexer:
        """The stream indexer. Its index is ensured once per sandbox before the first write: written through
        a missing alias, OpenSearch would create a plain index named like the alias, with a guessed mapping."""
        from agent_memory.recall.indexer import NotesIndexer

        index = self.notes_index
        if index is None:
            raise RuntimeError("the stream indexer needs OPENSEARCH_ENDPOINT")
        index.ensure()
        return NotesIndexer(index, embedder=self.embedding_model)


def bootstrap(settings: Settings | None = None, **given: Any) -> Services:
    """The object graph from ``settings`` (the environment's when None), with ``given`` parts used as they are."""
    return Services(settings or get_settings(), **given)


_provided: dict[str, Any] = {}  # parts every graph of this process is built around (``provide``)


@cache
def services() -> Services:
    """This process's graph, built on first use and kept (a warm sandbox reuses its clients)."""
    return bootstrap(**_provided)


def built(part: str) -> bool:
    """Whether this process's graph holds ``part`` already (nothing is built, nor the settings read, to answer):
    a test waits for the injection writer only if it was started."""
    return services.cache_info().currsize > 0 and part in vars(services())


def provided(part: str) -> Any:
    """The part every graph of this process is built around (``provide``), or None."""
    return _provided.get(part)


def provide(**parts: Any) -> None:
    """Build this process's graphs around ``parts`` from now on (a test's fake index, a faulty client factory)."""
    bootstrap(Settings(), **parts)  # an unknown part fails here, where it is named
    _provided.update(parts)
    services.cache_clear()


def reset(*, keep_provided: bool = True) -> None:
    """Forget the settings and the graph: tests and the local stack change the environment. A test's end
    forgets the provided parts too (``keep_provided=False``)."""
    get_settings.cache_clear()
    services.cache_clear()
    if not keep_provided:
        _provided.clear()
