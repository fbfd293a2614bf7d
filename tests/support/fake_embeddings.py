"""A fake embedding model: deterministic vectors that put texts sharing a *concept* close together.

No embedding model runs on this machine, so tests (and ``make bench``) use this one through the real
port: directly (``FakeEmbeddingModel``), or over HTTP behind ``tests.support.fake_openai``'s ``/embeddings``.

How it works: each word is lower-cased, mapped to a concept through a small synonym table (``kitten``
and ``feline`` are both ``cat``), and hashed to a few signed dimensions of the 1,024 (feature hashing);
a text's vector is the normalised sum of its concepts. So two texts with a synonym in common are near
each other although they share no word, which is what the semantic tests need, and unrelated texts are
nearly orthogonal. It has no other notion of meaning, and it can fail on purpose (``failure``).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from functools import cache

from agent_memory.providers.embedding import EMBEDDING_DIMENSION

SYNONYMS: dict[str, tuple[str, ...]] = {
    "cat": ("cat", "cats", "kitten", "kittens", "feline", "felines"),
    "car": ("car", "cars", "automobile", "vehicle", "sedan"),
    "coffee": ("coffee", "espresso", "latte", "cappuccino"),
    "deadline": ("deadline", "due", "cutoff"),
    "vacation": ("vacation", "holiday", "leave", "trip"),
    "allergy": ("allergy", "allergic", "intolerant", "intolerance"),
}
_CONCEPT = {word: concept for concept, words in SYNONYMS.items() for word in words}
_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "he", "in",
    "is", "it", "its", "of", "on", "or", "she", "that", "the", "to", "was", "were", "with",
})  # fmt: skip
_DIMS_PER_CONCEPT = 8
_WORD = re.compile(r"[a-z0-9]+")


@cache
def _signed_dims(concept: str, dimensions: int) -> tuple[tuple[int, float], ...]:
    digest = hashlib.sha256(concept.encode()).digest()
    return tuple(
        (int.from_bytes(digest[2 * i : 2 * i + 2], "big") % dimensions, 1.0 if digest[16 + i] & 1 else -1.0)
        for i in range(_DIMS_PER_CONCEPT)
    )


def fake_vector(text: str, dimensions: int = EMBEDDING_DIMENSION) -> list[float]:
    """The text's unit vector of ``dimensions`` numbers; a text with no word at all still gets one (a constant
    direction). Fewer dimensions (a test of thousands of indexed notes) put more concepts on the same ones."""
    vector = [0.0] * dimensions
    vector[0] = 0.01  # never the zero vector, which has no cosine
    for word in _WORD.findall(text.lower()):
        if word not in _STOPWORDS:
            for dim, sign in _signed_dims(_CONCEPT.get(word, word), dimensions):
                vector[dim] += sign
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


@dataclass
class FakeEmbeddingModel:
    failure: Exception | None = None
    calls: list[list[str]] = field(default_factory=list)
    dimensions: int = EMBEDDING_DIMENSION

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if self.failure is not None:
            raise self.failure
        return [fake_vector(text, self.dimensions) for text in texts]
