"""The table's vector index (DynamoDB ``SearchVectors``): the scope's notes nearest a query, among all of them.

The index ``NoteVectors`` (template.yaml) holds each note's indexed vector, an item of its own beside the note
(``note_items.vector_item``: ``vec#<day>#<position>``, ``embedding`` the int8 components of the note's ``vec`` as
numbers), searched by cosine, partitioned by ``pk``. A search names one partition, the caller's bound scope, and
nothing from the query reaches that condition: another scope's notes cannot be asked for. The index projects the
keys only: a hit is a place, whose note recall then reads from the table (the source of truth: a note deleted a
moment ago is not answered, and no text is copied into the index).

The index is filled from the table asynchronously: a note written a moment ago may not be returned yet. Recall
covers it with the newest notes it reads from the table anyway (``recall.service``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from agent_memory.domain.scope import Scope
from agent_memory.storage.client import DynamoDB
from agent_memory.storage.keys import parse_note_sk

VECTOR_INDEX = "NoteVectors"
TOP_K_MAX = 100  # SearchVectors' TopK is 1 to 100


class VectorHit(NamedTuple):
    """A note the index found: the partition it is stored under (checked again by recall) and its place."""

    pk: str
    day: str
    position: int


class NoteVectorIndex:
    """``nearest``: one ``SearchVectors`` request, through the one DynamoDB client and its error mapping."""

    def __init__(self, client: Any, table_name: str, *, dimensions: int, index_name: str = VECTOR_INDEX) -> None:
        self._client = DynamoDB(client)
        self._table = table_name
        self._index = index_name
        self.dimensions = dimensions

    def nearest(self, scope: Scope, vector: Sequence[float], *, k: int) -> list[VectorHit]:
        """The places of the scope's ``k`` (at most 100) notes nearest ``vector``, nearest first. The ``HASH`` condition
        is the bound scope's key; the search reads no other partition."""
        if len(vector) != self.dimensions:
            raise ValueError(f"a query vector of {len(vector)} numbers for an index of {self.dimensions}")
        answer = self._client.search_vectors(
            TableName=self._table,
            IndexName=self._index,
            SearchVector=[{"N": f"{float(x):.7f}"} for x in vector],
            TopK=max(1, min(k, TOP_K_MAX)),
            SearchConditionExpression="pk = :scope",
            ExpressionAttributeValues={":scope": {"S": scope.key}},
            ProjectionExpression="pk, sk",
        )
        return [
            VectorHit(hit["Item"]["pk"]["S"], *parse_note_sk(hit["Item"]["sk"]["S"])) for hit in answer["SearchResults"]
        ]
