"""Note vectors stored in the table (recall without OpenSearch, docs/api.md §6): compact, and compared by cosine.

**What is stored.** One binary attribute ``vec`` on the note item::

    version (1 byte, 1) | model tag (4 bytes) | norm (float32) | components (int8 each)

- **int8 components**: each number divided by the vector's largest magnitude and rounded to -127..127.
  Cosine is all recall uses, so the magnitude is dropped; quantization moves a cosine by about 0.001
  (measured against float vectors in ``tests/unit/test_vectors.py``), far below the gaps that rank notes.
- **trailing zeros trimmed**: a model served with vectors zero-padded to ``MEMORY_EMBEDDING_DIMENSIONS``
  (a 384-number MiniLM padded to 1,024) stores 384 bytes, not 1,024; the zeros add nothing to a dot
  product or a norm, so cosine is unchanged.
- **the norm** of the int8 vector, so that a query computes one dot product per note and no norm.
- **the model tag**: CRC-32 of ``<MEMORY_EMBEDDING_MODEL>|<MEMORY_EMBEDDING_DIMENSIONS>``. A vector written by
  another model (the setting changed) is not comparable: recall treats it as missing (BM25 still finds
  the note) and the vector fill (``make reindex`` without an index) writes it again.

**Cost.** 9 bytes plus one per non-zero-trailing component: 393 bytes for MiniLM (384), 1,033 for Titan v2
at 1,024. A note item is about 0.3 to 0.5 KB, so with MiniLM it stays within one write unit (1 KB) for
most notes and with Titan 1,024 it takes two; the recall Query reads (and is billed for) the whole item,
so 1,000 notes are about 0.8 MB with MiniLM (one 1 MB page, about 100 read units eventually consistent)
against 0.4 MB without vectors. docs/recall-quality.md has the figures.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence

VERSION = 1
_HEADER = struct.Struct("<BIf")


def model_tag(model: str, dimensions: int) -> int:
    """The 32-bit tag of a model and its dimension: vectors of different tags are never compared."""
    return zlib.crc32(f"{model}|{dimensions}".encode())


def encode(vector: Sequence[float], *, tag: int) -> bytes:
    """The stored form of a vector (see the module docstring); a zero vector has no direction: ValueError."""
    largest = max((abs(x) for x in vector), default=0.0)
    if not largest or not math.isfinite(largest):
        raise ValueError("a vector to store needs a finite, non-zero component")
    quantized = [round(x * 127 / largest) for x in vector]
    while quantized and quantized[-1] == 0:
        quantized.pop()
    norm = math.sqrt(sum(q * q for q in quantized))
    return _HEADER.pack(VERSION, tag, norm) + bytes(q & 0xFF for q in quantized)


def decode(blob: bytes, *, tag: int) -> tuple[memoryview, float] | None:
    """The int8 components and their norm, or None for a vector of another model (or version, or corrupt)."""
    if len(blob) <= _HEADER.size:
        return None
    version, stored_tag, norm = _HEADER.unpack_from(blob)
    if version != VERSION or stored_tag != tag or not norm > 0:
        return None
    return memoryview(blob)[_HEADER.size :].cast("b"), norm


def index_components(blob: bytes, *, tag: int, dimensions: int) -> list[int] | None:
    """The stored vector's int8 components zero-padded to ``dimensions``: what the table's vector index holds
    (``storage.vector_index``). The index's distance is COSINE, which ignores the scale, so its cosine with a query
    is the one ``QueryVector.cosine`` computes from the same blob: both halves of recall rank on one number.
    None for a vector of another model (``decode``), or longer than the index's vectors."""
    decoded = decode(blob, tag=tag)
    if decoded is None or len(decoded[0]) > dimensions:
        return None
    components = decoded[0].tolist()
    return components + [0] * (dimensions - len(components))


try:
    _sumprod = math.sumprod  # type: ignore[attr-defined,unused-ignore]  # Python 3.12+: a C loop
except AttributeError:  # Python 3.11
    import operator

    def _sumprod(p: Sequence[float], q: Sequence[float]) -> float:
        return float(sum(map(operator.mul, p, q)))


class QueryVector:
    """A query's vector, ready to be compared with stored ones by cosine."""

    def __init__(self, vector: Sequence[float]) -> None:
        values = [float(x) for x in vector]
        while values and values[-1] == 0.0:
            values.pop()
        self._values = values
        self._norm = math.sqrt(_sumprod(values, values))

    def cosines(self, stored: Sequence[tuple[memoryview, float]]) -> list[float]:
        """Cosines with many decoded stored vectors: one matrix product with numpy (about 1 ms for 2,000
        notes), else one ``sumprod`` each (about 15 µs a note on a Lambda vCPU)."""
        try:
            import numpy as np
        except ImportError:  # pragma: no cover - numpy is in the layer; a plain Python still works
            return [self.cosine(v) for v in stored]
        width = max(len(components) for components, _ in stored)
        matrix = np.zeros((len(stored), width), dtype=np.float32)
        for row, (components, _) in enumerate(stored):
            matrix[row, : len(components)] = np.frombuffer(components, dtype=np.int8)
        query = np.zeros(width, dtype=np.float32)
        head = self._values[:width]
        query[: len(head)] = head
        norms = np.array([norm for _, norm in stored], dtype=np.float32)
        if not self._norm:
            return [0.0] * len(stored)
        result: list[float] = (matrix @ query / (norms * self._norm)).tolist()
        return result

    def cosine(self, stored: tuple[memoryview, float]) -> float:
        """Cosine with a decoded stored vector; components past either's end count as zeros."""
        components, norm = stored
        length = min(len(components), len(self._values))
        if not length or not self._norm:
            return 0.0
        head = self._values if length == len(self._values) else self._values[:length]
        tail = components if length == len(components) else components[:length]
        return _sumprod(head, tail) / (self._norm * norm)


def cosines_with(
    vector: bytes | None, stored: Sequence[tuple[str, bytes | None]], *, tag: int | None
) -> dict[str, float]:
    """The cosine of ``vector`` (a note's, as stored) with each of ``stored`` (``(id, vector)``) that has a vector of
    the same model; empty when ``vector`` is None or the table holds no vectors (``tag`` None)."""
    mine = decode(vector, tag=tag) if vector is not None and tag is not None else None
    if mine is None or tag is None:
        return {}
    query = QueryVector(mine[0].tolist())
    found: dict[str, float] = {}
    for ident, blob in stored:
        other = decode(blob, tag=tag) if blob is not None else None
        if other is not None:
            found[ident] = query.cosine(other)
    return found
