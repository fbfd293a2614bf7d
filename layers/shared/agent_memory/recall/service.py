"""``recall`` (docs/api.md §3): the scope's notes that best match a query, best first, and which path answered.

The **keyword** path needs nothing but the table: one paginated Query (never a Scan) reads the texts of
the scope's newest notes (``pk``, ``sk`` and ``text`` only), BM25 (``search.bm25``) ranks them in
process, and one BatchGetItem reads the k best notes whole.

Why it reads at most ``KEYWORD_MAX_NOTES`` (2,000) notes, newest first:
- the answer must come in the time of a chat tool call, whatever a scope's size. Client time grows
  linearly with the notes read: measured here, parsing the projected page and ranking take about 1.7 ms
  per 100 notes (12 + 7 ms at 1,000 notes, 24 + 14 ms at 2,000), on top of DynamoDB's own time for
  up to 1 MB per page. Unbounded, the biggest scopes would get slower every day and cost read capacity
  on every call (a note item is about 0.3 to 0.5 KB: 2,000 notes are one or two pages, 80 to 130 read
  units at most, eventually consistent);
- notes older than the newest 2,000 have long been folded into the scope's curated document by the
  nightly consolidation (it takes notes after 7 days), and every turn injects that document anyway;
- the full history is the index's job: with OpenSearch configured, recall searches every note.
So the fallback is exact for any scope of up to 2,000 notes (more than three months at 20 notes a day),
and beyond that it searches the most recent 2,000.

**Hybrid without an index** (docs/api.md §6): with an embedding model and no ``OPENSEARCH_ENDPOINT``, every
note is written with its vector (``search.vectors``: int8, in the note item's ``vec``), and the same
Query also reads ``vec``; the cosine of the query's vector with each note's, and BM25, are fused
(``search.fusion.weighted_fusion``) and ``mode`` is ``hybrid``. A note without a vector (written before
the model was configured, or while it was down) still counts for BM25; ``make reindex`` fills vectors in.
When the query cannot be embedded, BM25 answers alone and ``mode`` is ``keyword``.

**The table's vector index** (``storage.vector_index``, with ``vector_index``): the cosine half then reaches
every note of the scope. One ``SearchVectors`` in the bound scope's partition gives the places of the
``FUSION_POOL`` notes nearest the query among all of them; those the newest-notes read did not hold are read
(one BatchGetItem: text, vector, conversation) and join its rows, older than all of them, and the same steps
rank the whole. The keyword half gains no other note: BM25 still finds only among the newest 2,000 and the
notes the vector half brought. The index is filled asynchronously, so a note written in the last seconds may be
missing from its answer: it is among the newest notes read from the table, whose own vectors the cosine half
compares too (both halves compare the same int8 components, ``search.vectors.index_components``). A failed
search (throttled, refused, an index not there yet) degrades to the newest notes alone, counted
(``RecallVectorSearchFailed``) and logged; ``mode`` stays what they answer (``hybrid``).

The **index** path (OpenSearch, when ``OPENSEARCH_ENDPOINT`` is set) searches every note of the scope:
- with an embedding model (``MEMORY_EMBEDDING_MODEL``), the query is embedded and one ``_msearch`` asks
  for the scope's BM25 ranking and its nearest neighbours (kNN, cosine); the two are fused by the same
  weighted score fusion (``search.fusion``). ``mode`` says which halves found notes: ``hybrid`` both, ``semantic`` only
  the kNN half (no note holds any of the query's words: a paraphrase), ``keyword`` only BM25 (or none:
  no note has a vector yet, or the scope is empty);
- without one, or when embedding the query fails (timeout, error, a vector of the wrong size), BM25
  alone answers, and ``mode`` is ``keyword``.
BM25's candidates are scored again with the scope's own statistics, which the same ``_msearch`` counts
(``recall.index_path``, ``providers.index_queries``): the node's are its shard's, every scope routed there.
Each part degrades to the one below it, never to an error: no vector, BM25 in the index; no index (down,
slow, refusing), the table's path. Scores are the fused scores (0..1) in ``hybrid`` and ``semantic``
mode, BM25 scores in ``keyword`` mode, then raised for the days the query names and lowered by diversity
(``recall.ranking``: both paths take the same steps after ranking); higher is better in all three. With
``MEMORY_RECALL_NEIGHBOURS``, the best hit's neighbours in its conversation are read from the table
(``recall.neighbours``: one small Query; a failed one drops them).

**Reranking** (optional, off by default: ``providers.rerank``): with ``MEMORY_RERANK_MODEL``, either path
gathers its best ``MEMORY_RERANK_CANDIDATES`` instead of ``k``, reads them whole, and the reranking model
orders them; the ``k`` it finds most relevant are answered with its relevance scores (0..1), in the same
``mode``. When it times out or fails, the path's own first ``k`` are answered, as without it.

**Superseded notes** (``domain.provenance``) come after every current note, whatever their score (lowered to
the lowest current score when it was higher): a note a fold replaced in the document is still recalled, never
above what replaced it, nor in the place of a current match. So when some of the ``k`` notes a path answers
are superseded, the path is asked again for as many more as are missing (``current_best``, in ``recall``
itself, whichever path answers), up to the candidates the paths rank anyway (``CANDIDATE_WINDOW``, or the
reranker's window): a superseded note is answered only when fewer than ``k`` current notes match. The query
is embedded once and the table's rows read once for all the asks; the index is searched again, once per ask.

Fail closed: every note about to be returned is checked against the scope once more (its stored
partition key), whatever path found it; a foreign one is dropped and logged, never returned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Literal

from agent_memory.basics.clock import utc_now
from agent_memory.basics.errors import EmbeddingUnavailable
from agent_memory.basics.observability import logger, metrics
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import RecalledAnswer, ScoredNoteAnswer
from agent_memory.recall.index_path import rank_index
from agent_memory.recall.neighbours import SPAN
from agent_memory.recall.ports import RecalledNotes
from agent_memory.recall.ranking import FUSION_POOL, Tuning, rank_rows
from agent_memory.recall.selection import CANDIDATE_WINDOW
from agent_memory.search.vectors import QueryVector
from agent_memory.storage.note_items import KeyedNote, NoteText

if TYPE_CHECKING:  # given, never built here: their modules load only where an index is configured
    from agent_memory.providers.embedding import EmbeddingModel
    from agent_memory.providers.notes_index import NotesIndex
    from agent_memory.providers.rerank import RerankStage
    from agent_memory.storage.vector_index import NoteVectorIndex

# The keyword fallback reads at most this many of the scope's newest notes (see the module docstring).
KEYWORD_MAX_NOTES = 2000


@dataclass
class _Reads:
    """What one recall has read, kept while its answer is widened (``current_best``): the query is embedded once,
    the table's rows are read once, and an index that failed is not asked again."""

    path: Literal["opensearch", "dynamodb"] = "opensearch"
    embedded: bool = False
    vector: list[float] | None = None
    rows: list[NoteText] | None = None  # the caller's own (another scope's were set aside as read)


@dataclass
class RecallService:
    """The recall operation; the note store, the index and the embedding model (None: not configured) are
    given, never created here. ``vector_tag`` (``search.vectors.model_tag``): the table's notes carry vectors
    of this model, and the table's path is hybrid; None: it is keyword only (vectors live in the index, or
    nowhere). ``vector_index``: the table's vector index, which the cosine half of the table's path searches."""

    notes: RecalledNotes
    _: KW_ONLY
    index: NotesIndex | None = None
    embedder: EmbeddingModel | None = None
    keyword_max_notes: int = KEYWORD_MAX_NOTES
    tuning: Tuning = field(default_factory=Tuning)
    vector_tag: int | None = None
    reranker: RerankStage | None = None
    vector_index: NoteVectorIndex | None = None

    def recall(self, scope: Scope, query: str, *, k: int) -> RecalledAnswer:
        """The ``k`` best current notes, superseded ones after them (``current_best``), from whichever path
        answers (``_gathered``)."""
        reads = _Reads()
        bound = max(self._window(k), CANDIDATE_WINDOW)
        result = current_best(lambda wanted: self._gathered(scope, query, wanted, reads), k, bound=bound)
        metrics.add_metric(name=f"Recall{result.mode.title()}", unit="Count", value=1)
        logger.info(
            "recall answered",
            extra={"scope": scope.kind, "mode": result.mode, "path": reads.path, "hits": len(result.notes)},
        )
        return result

    def _gathered(self, scope: Scope, query: str, k: int, reads: _Reads) -> RecalledAnswer:
        """The ``k`` best candidates of the index when it is configured and answers; of the table otherwise
        (degrade, never fail)."""
        if self.index is not None and reads.path == "opensearch":
            try:
                return self._indexed(self.index, scope, query, k, reads)
            except Exception:  # noqa: BLE001 - any index fault (down, timeout, bad answer) degrades to the table
                logger.warning("the notes index failed; answering from DynamoDB", exc_info=True)
                metrics.add_metric(name="RecallIndexFailed", unit="Count", value=1)
        reads.path = "dynamodb"
        return self._table(scope, query, k, reads)

    def _indexed(self, index: NotesIndex, scope: Scope, query: str, k: int, reads: _Reads) -> RecalledAnswer:
        """The index's candidates through the shared steps (``recall.index_path``), then the notes read whole
        from the table.

        The table is the source of truth: a note deleted a moment ago, whose removal the indexer has not
        yet applied, is not returned, and the consolidated flag is the current one.
        """
        wanted = self._window(k)
        ranking = rank_index(
            index, scope.key, query, vector=self._query_vector(query, reads), today=utc_now().date(), k=wanted,
            tuning=self.tuning, around=lambda hits: self._around(scope, hits),
        )  # fmt: skip
        best = dict(ranking.slots)
        notes = self.notes.get_many(scope, list(best))
        found = [(keyed, best[keyed.note.day, keyed.note.position]) for keyed in notes]
        kept = _only_in_scope(scope, found, already_dropped=ranking.foreign)
        return RecalledAnswer(notes=self._reranked(query, kept, k), mode=ranking.mode)

    def _around(self, scope: Scope, hits: list[tuple[str, int]]) -> list[NoteText]:
        """The notes written near the strong hits, in the caller's partition (``recall.neighbours``): one Query
        per hit; none when a read fails (the answer is given without neighbours, never refused)."""
        try:
            rows = [row for day, position in hits for row in self.notes.around(scope, day, position, span=SPAN)]
        except Exception:  # noqa: BLE001 - any read fault (throttled, timeout) only drops the neighbours
            logger.warning("reading recall's neighbours failed; answering without them", exc_info=True)
            metrics.add_metric(name="RecallNeighboursFailed", unit="Count", value=1)
            return []
        own = [row for row in rows if row.pk == scope.key]
        _dropped_foreign(scope, len(rows) - len(own))
        return own

    def _query_vector(self, query: str, reads: _Reads) -> list[float] | None:
        """The query's embedding, or None (no model, or it failed: BM25 answers alone); asked once a recall."""
        if self.embedder is None or reads.embedded:
            return reads.vector
        reads.embedded = True
        try:
            reads.vector = self.embedder.embed([query])[0]
        except EmbeddingUnavailable as error:
            logger.warning("embedding the query failed; answering with BM25 alone", extra={"why": error.message})
            metrics.add_metric(name="RecallEmbeddingFailed", unit="Count", value=1)
        return reads.vector

    def _table(self, scope: Scope, query: str, k: int, reads: _Reads) -> RecalledAnswer:
        """The shared steps (``recall.ranking.rank_rows``) over the scope's newest notes, then the k best read
        whole: two requests (and the query's embedding).

        Rows of another scope are set aside before ranking (so they cannot even weigh on the idf), and
        the whole notes are checked again on their way out.
        """
        tag = self.vector_tag
        vector = self._query_vector(query, reads) if tag is not None else None
        if reads.rows is None:
            rows = self.notes.newest_texts(
                scope, limit=self.keyword_max_notes, vectors=vector is not None, threads=self.tuning.neighbours > 0
            )
            if vector is not None and self.vector_index is not None:  # read once: its pool is wider than any widening
                rows = rows + self._older_nearest(self.vector_index, scope, vector, rows, k)
            reads.rows = [row for row in rows if row.pk == scope.key]
            _dropped_foreign(scope, len(rows) - len(reads.rows))
        own = reads.rows
        order, mode = rank_rows(
            query,
            own,
            vector=QueryVector(vector) if vector is not None else None,
            tag=tag,
            today=utc_now().date(),
            k=self._window(k),
            tuning=self.tuning,
        )
        best = {(own[n].day, own[n].position): score for n, score in order}
        notes = self.notes.get_many(scope, list(best))
        hits = [(keyed, best[keyed.note.day, keyed.note.position]) for keyed in notes]
        return RecalledAnswer(notes=self._reranked(query, _only_in_scope(scope, hits), k), mode=mode)

    def _older_nearest(
        self, index: NoteVectorIndex, scope: Scope, vector: list[float], rows: list[NoteText], k: int
    ) -> list[NoteText]:
        """The scope's notes nearest the query in the vector index that ``rows`` (the newest) do not hold, read from
        the table (one BatchGetItem), newest first; none when the search fails (the newest notes answer alone: see
        the module docstring)."""
        try:
            hits = index.nearest(scope, vector, k=max(self._window(k), FUSION_POOL))
            own = [hit for hit in hits if hit.pk == scope.key]
            _dropped_foreign(scope, len(hits) - len(own))
            held = {(row.day, row.position) for row in rows}
            older = self.notes.texts_of(scope, [(h.day, h.position) for h in own if (h.day, h.position) not in held])
        except Exception:  # noqa: BLE001 - any fault (throttled, refused, no index yet) keeps the newest notes
            logger.warning("the vector index search failed; ranking the newest notes alone", exc_info=True)
            metrics.add_metric(name="RecallVectorSearchFailed", unit="Count", value=1)
            return []
        return sorted(older, key=lambda row: (row.day, row.position), reverse=True)

    def _window(self, k: int) -> int:
        """How many candidates a path gathers: ``k``, or the reranker's window when there is one."""
        return k if self.reranker is None else self.reranker.window(k)

    def _reranked(self, query: str, hits: list[ScoredNoteAnswer], k: int) -> list[ScoredNoteAnswer]:
        """The reranker's ``k`` best of the path's candidates, or the path's own first ``k`` (no reranker,
        or it failed: ``providers.rerank`` counts and logs it)."""
        if self.reranker is None:
            return hits[:k]
        order = self.reranker.reorder(query, [hit.text for hit in hits], k)
        if order is None:
            return hits[:k]
        return [hits[place].model_copy(update={"score": round(relevance, 6)}) for place, relevance in order]


def current_best(gather: Callable[[int], RecalledAnswer], k: int, *, bound: int) -> RecalledAnswer:
    """The answer of ``gather(k)`` (a path's ``k`` best candidates) with its superseded notes after its current
    ones (``current_first``). While some of what it gathered are superseded and fewer than ``k`` are current, it
    is gathered again, the pool widened by as many as are missing, up to ``bound``: the current notes answered
    are then the best current ones, not those that happened to rank among the first ``k``. A gathering that
    answers fewer than asked has no more to give."""
    wanted = k
    result = gather(wanted)
    while True:
        current = sum(1 for hit in result.notes if hit.superseded_by is None)
        if current >= k or len(result.notes) < wanted or wanted >= bound:
            break
        wanted = min(bound, wanted + k - current)
        result = gather(wanted)
    return result.model_copy(update={"notes": current_first(result.notes)[:k]})


def current_first(hits: list[ScoredNoteAnswer]) -> list[ScoredNoteAnswer]:
    """The hits with every superseded note (``superseded_by``: a fold replaced the line it was cited for) ranked
    below every current one, each in its own order; a superseded note's score is lowered to the lowest current
    score where it was higher, so the answer stays best first by score."""
    current = [hit for hit in hits if hit.superseded_by is None]
    if len(current) == len(hits):
        return hits
    floor = min((hit.score for hit in current), default=None)
    stale = [
        hit if floor is None or hit.score <= floor else hit.model_copy(update={"score": floor})
        for hit in hits
        if hit.superseded_by is not None
    ]
    return current + stale


def _only_in_scope(
    scope: Scope, hits: list[tuple[KeyedNote, float]], *, already_dropped: int = 0
) -> list[ScoredNoteAnswer]:
    """Fail closed: a hit whose stored scope is not the caller's is dropped, whatever produced it."""
    kept = [ScoredNoteAnswer.scored(keyed.note, score) for keyed, score in hits if keyed.pk == scope.key]
    _dropped_foreign(scope, len(hits) - len(kept) + already_dropped)
    return kept


def _dropped_foreign(scope: Scope, dropped: int) -> None:
    """Counted and logged as an error: a row of another scope reached recall, which a key-building bug alone can do."""
    if dropped:
        metrics.add_metric(name="RecallForeignHitsDropped", unit="Count", value=dropped)
        logger.error("recall dropped hits of another scope", extra={"scope": scope.kind, "dropped": dropped})
