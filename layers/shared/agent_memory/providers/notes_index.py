"""The notes index in OpenSearch (opensearch-py): its mapping, versioned behind an alias, and the requests.

- **Versioned behind an alias.** Documents live in ``notes-v<N>``; everything reads and writes through
  the alias ``notes``. A mapping change is a new version filled by the reindex command, then an alias
  swap: never an outage. ``ensure()`` creates the current version and the alias if they are missing, and
  checks that the live mapping holds every field this code relies on (a drifted mapping is an error at
  start-up, not wrong answers later).
- **Routed by scope.** Every document and every search carries ``routing=<scope key>``: a scope's
  notes sit in one shard, and a search touches only that shard.
- **Filtered by scope, and checked again.** Every search has a ``term`` filter on ``scope``; every hit's
  ``scope`` is returned so that the caller can check it once more (fail closed).
- **The scope's statistics with every keyword search.** The node's BM25 uses its shard's statistics (every
  scope routed there); the search bodies (``providers.index_queries``) also count, within the scope, its notes
  and the notes holding each query term, so that recall scores the candidates with the scope's own.
- **Embeddings**: ``knn_vector`` with HNSW on the **Lucene** engine, cosine: pure Java, so it runs on the
  k-NN plugin from Maven Central (which lacks the native faiss/nmslib libraries) and on Amazon
  OpenSearch Service alike.

The document id is ``<scope key>|<note id>``: unique across scopes, and derived from the note's table
key, so the stream indexer's insert, update and removal of one note all address the same document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agent_memory.domain.notes import Note
from agent_memory.providers.embedding import EMBEDDING_DIMENSION
from agent_memory.providers.index_queries import Candidates, IndexHit, bm25, candidates, hits, in_scope, knn, on_days
from agent_memory.providers.index_queries import scope_size as scope_size_body
from agent_memory.search.analysis import ANALYZER, INDEX_ANALYSIS
from agent_memory.search.dates import Days

ALIAS = "notes"
# 2: ``text`` is analysed like the table's BM25 (search.analysis: stop words, Porter2 stems).
# 3: irregular forms (went, met, bought, children) share their base word's term (search.analysis.IRREGULAR).
INDEX_VERSION = 3

MAPPING: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        "scope": {"type": "keyword"},
        "note_id": {"type": "keyword"},
        "day": {"type": "date", "format": "yyyy-MM-dd"},
        "position": {"type": "integer"},
        "text": {"type": "text", "analyzer": ANALYZER},  # BM25 on the terms of search.analysis
        "embedding": {
            "type": "knn_vector",
            "dimension": EMBEDDING_DIMENSION,
            "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"},
        },
        "consolidated": {"type": "boolean"},
        "created_at": {"type": "date"},
    },
}
SETTINGS: dict[str, Any] = {
    "index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0},
    "analysis": INDEX_ANALYSIS,
}


def index_body(*, dimensions: int = EMBEDDING_DIMENSION, shards: int = 1, replicas: int = 0) -> dict[str, Any]:
    """A new index version's settings and mapping: ``MEMORY_EMBEDDING_DIMENSIONS`` numbers a vector, and the
    shard and replica counts of ``MEMORY_OPENSEARCH_SHARDS``/``_REPLICAS`` (docs/configuration.md)."""
    embedding = MAPPING["properties"]["embedding"] | {"dimension": dimensions}
    settings = SETTINGS | {"index": SETTINGS["index"] | {"number_of_shards": shards, "number_of_replicas": replicas}}
    mappings = MAPPING | {"properties": MAPPING["properties"] | {"embedding": embedding}}
    return {"settings": settings, "mappings": mappings}


class IndexWriteRefused(RuntimeError):
    """The index refused a document of a bulk write."""


class IndexSearchFailed(RuntimeError):
    """One search of a multi-search failed on the node (the other's answer is not used alone)."""


class IndexMappingMismatch(RuntimeError):
    """The live index does not hold the fields (and types) this code relies on: reindex into a new version."""


@dataclass(frozen=True, slots=True)
class Upsert:
    """Write the note's document whole (its vector too, when there is one)."""

    scope_key: str
    note: Note
    embedding: list[float] | None = None

    @property
    def note_id(self) -> str:
        return self.note.id


@dataclass(frozen=True, slots=True)
class UpdateKeepingVector:
    """Rewrite the note's fields but its vector (the consolidated flag changed; a note's text never does), so
    that no embedding is computed again. A document that is missing is created, without a vector."""

    scope_key: str
    note: Note

    @property
    def note_id(self) -> str:
        return self.note.id


@dataclass(frozen=True, slots=True)
class Remove:
    scope_key: str
    note_id: str


IndexAction = Upsert | UpdateKeepingVector | Remove


@dataclass(frozen=True, slots=True)
class BulkOutcome:
    error: str | None  # None: applied
    created: bool  # the document did not exist before


def _document(scope_key: str, note: Note, embedding: list[float] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "scope": scope_key,
        "note_id": note.id,
        "day": note.day,
        "position": note.position,
        "text": note.text,
        "consolidated": note.consolidated,
        "created_at": note.created_at,
    }
    if embedding is not None:
        body["embedding"] = embedding
    return body


def document_id(scope_key: str, note_id: str) -> str:
    return f"{scope_key}|{note_id}"


def make_opensearch_client(endpoint: str, *, timeout_s: float, connection_class: Any = None) -> Any:
    """A client for ``endpoint``: plain HTTP for a local node, SigV4 for a managed domain or a Serverless collection.

    Bounded: one attempt after a failure, ``timeout_s`` per request. Recall falls back to DynamoDB rather
    than wait. ``connection_class``: opensearch-py's ``RequestsHttpConnection`` unless given (the tests' OpenSearch
    tier gives one that holds a handler's requests to its function's grants).
    """
    from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

    url = urlsplit(endpoint)
    options: dict[str, Any] = {
        "hosts": [{"host": url.hostname, "port": url.port or (443 if url.scheme == "https" else 80)}],
        "use_ssl": url.scheme == "https",
        "verify_certs": url.scheme == "https",
        "timeout": timeout_s,
        "max_retries": 1,
        "retry_on_timeout": False,
        "connection_class": connection_class or RequestsHttpConnection,
    }
    if url.scheme == "https":
        import boto3

        service = "aoss" if (url.hostname or "").endswith(".aoss.amazonaws.com") else "es"
        session = boto3.Session()
        options["http_auth"] = AWSV4SignerAuth(session.get_credentials(), session.region_name, service)
    return OpenSearch(**options)


class NotesIndex:
    """Reads and writes through the alias; the client is given, never created here."""

    def __init__(
        self,
        client: Any,
        *,
        alias: str = ALIAS,
        version: int = INDEX_VERSION,
        dimensions: int = EMBEDDING_DIMENSION,
        shards: int = 1,
        replicas: int = 0,
    ) -> None:
        self._client = client
        self._alias = alias
        self._index = f"{alias}-v{version}"
        self._body = index_body(dimensions=dimensions, shards=shards, replicas=replicas)
        self._dimensions = dimensions

    @property
    def name(self) -> str:
        """The versioned index this code writes (``notes-v<N>``)."""
        return self._index

    @property
    def alias(self) -> str:
        return self._alias

    @property
    def client(self) -> Any:
        """The opensearch-py client (``providers.index_move`` moves the alias with it)."""
        return self._client

    def ensure(self) -> None:
        """Create the versioned index and point the alias at it if missing; check the live mapping."""
        if not self._client.indices.exists_alias(name=self._alias):
            if not self._client.indices.exists(index=self._index):
                self._client.indices.create(index=self._index, body=self._body)
            self._client.indices.put_alias(index=self._index, name=self._alias)
        self.check_mapping()

    def check_mapping(self) -> bool:
        """IndexMappingMismatch, one line, when the live index lacks a field this code relies on or holds
        vectors of another size than ``MEMORY_EMBEDDING_DIMENSIONS``; False when there is no index yet (the
        indexer creates it), True when it matches."""
        if not self._client.indices.exists_alias(name=self._alias):
            return False
        for name, mapping in self._client.indices.get_mapping(index=self._alias).items():
            live = mapping["mappings"].get("properties", {})
            for field, wanted in MAPPING["properties"].items():
                if live.get(field, {}).get("type") != wanted["type"]:
                    raise IndexMappingMismatch(f"index {name}: field {field!r} is not {wanted['type']}: reindex")
            size = live["embedding"].get("dimension")
            if size != self._dimensions:
                raise IndexMappingMismatch(
                    f"index {name} holds vectors of {size} dimensions but MEMORY_EMBEDDING_DIMENSIONS is"
                    f" {self._dimensions}: set it to {size}, or reindex into a new index version"
                )
        return True

    def bulk(self, actions: Sequence[IndexAction]) -> list[BulkOutcome]:
        """Apply the actions in one ``_bulk`` request, in order (one note's actions share a shard, and a shard
        applies them in the order sent); one outcome per action. Removing a document already gone is fine."""
        if not actions:
            return []
        lines: list[dict[str, Any]] = []
        for action in actions:
            target = {
                "_index": self._alias,
                "_id": document_id(action.scope_key, action.note_id),
                "routing": action.scope_key,
            }
            match action:
                case Upsert(scope_key, note, embedding):
                    lines += [{"index": target}, _document(scope_key, note, embedding)]
                case UpdateKeepingVector(scope_key, note):
                    lines += [{"update": target}, {"doc": _document(scope_key, note, None), "doc_as_upsert": True}]
                case Remove():
                    lines.append({"delete": target})
        answer = self._client.bulk(body=lines)
        outcomes = []
        for item in answer["items"]:
            [(kind, result)] = item.items()
            error = result.get("error")
            outcomes.append(
                BulkOutcome(
                    error=None
                    if error is None
                    else f"{kind} {result.get('_id')}: {error.get('type')}: {error.get('reason')}",
                    created=result.get("result") == "created",
                )
            )
        return outcomes

    def put_many(self, scope_key: str, notes: list[Note], *, embeddings: list[list[float]] | None = None) -> None:
        """Upsert many notes of one scope in one bulk request (the reindex); any item refused is an error."""
        vectors: list[list[float] | None] = list(embeddings) if embeddings is not None else [None] * len(notes)
        outcomes = self.bulk([Upsert(scope_key, note, vector) for note, vector in zip(notes, vectors, strict=True)])
        refused = next((outcome.error for outcome in outcomes if outcome.error), None)
        if refused:
            raise IndexWriteRefused(f"bulk write refused {refused}")

    def note_ids(self, scope_key: str, *, page_size: int = 1000) -> set[str]:
        """The ids of every note the index holds for the scope (``search_after`` pages on ``note_id``)."""
        ids: set[str] = set()
        body: dict[str, Any] = {
            "size": page_size,
            "_source": ["note_id"],
            "query": {"bool": {"filter": [in_scope(scope_key)]}},
            "sort": [{"note_id": "asc"}],
        }
        while True:
            hits = self._client.search(index=self._alias, body=body, routing=scope_key)["hits"]["hits"]
            ids.update(hit["_source"]["note_id"] for hit in hits)
            if len(hits) < page_size:
                return ids
            body["search_after"] = hits[-1]["sort"]

    def delete(self, scope_key: str, note_id: str) -> None:
        """Remove one note's document; one that is already gone is fine (a stream record can come twice)."""
        self._client.delete(
            index=self._alias, id=document_id(scope_key, note_id), routing=scope_key, params={"ignore": 404}
        )

    def refresh(self) -> None:
        self._client.indices.refresh(index=self._alias)

    def keyword(
        self, scope_key: str, query: str, *, k: int, expansion: Mapping[str, float] | None = None
    ) -> Candidates:
        """BM25 on ``text``, any of the query's words (and ``expansion``'s terms, weighted), within the scope
        (filter and routing), best first; with the scope's statistics for those terms (``providers.index_queries``),
        in one ``_msearch``."""
        header = {"index": self._alias, "routing": scope_key}
        body = [header, bm25(scope_key, query, k, expansion), header, scope_size_body(scope_key)]
        keyword, size = self._client.msearch(body=body)["responses"]
        if "error" in keyword:
            raise IndexSearchFailed(f"the keyword search failed: {keyword['error']}")
        return candidates(keyword, size)

    def within_days(self, scope_key: str, query: str, days: Days, *, size: int) -> list[IndexHit]:
        """The scope's notes written on ``days`` (``search.dates``), best BM25 match first, then newest."""
        body = on_days(scope_key, query, days, size)
        return hits(self._client.search(index=self._alias, body=body, routing=scope_key))

    def hybrid(
        self, scope_key: str, query: str, vector: list[float], *, size: int, keyword_size: int | None = None
    ) -> tuple[Candidates, list[IndexHit]]:
        """The scope's BM25 ranking (``keyword_size``, else ``size``, with the scope's statistics as ``keyword``
        gives them) and its ``size`` nearest neighbours of ``vector``, in one ``_msearch``.

        The two are fused by the caller, which needs no score normalisation and no search pipeline on the
        cluster. A failed half is an error (the other is not used alone); a failed count leaves the
        statistics out.
        """
        header = {"index": self._alias, "routing": scope_key}
        keyword_body = bm25(scope_key, query, keyword_size or size, None)
        body = [header, keyword_body, header, scope_size_body(scope_key), header, knn(scope_key, vector, size)]
        keyword, count, semantic = self._client.msearch(body=body)["responses"]
        failed = [response["error"] for response in (keyword, semantic) if "error" in response]
        if failed:
            raise IndexSearchFailed(f"a hybrid search half failed: {failed[0]}")
        return candidates(keyword, count), hits(semantic)

    def count(self, scope_key: str) -> int:
        answer = self._client.count(index=self._alias, body={"query": in_scope(scope_key)}, routing=scope_key)
        return int(answer["count"])

    def count_without_vector(self, scope_key: str) -> int:
        """The scope's documents written without an embedding (the model was down): the reindex fills them in."""
        body = {"query": {"bool": {"filter": [in_scope(scope_key)], "must_not": [{"exists": {"field": "embedding"}}]}}}
        return int(self._client.count(index=self._alias, body=body, routing=scope_key)["count"])
