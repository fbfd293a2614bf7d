"""Vectors stored with notes (search.vectors): int8, trailing zeros trimmed, compared by cosine."""

from __future__ import annotations

import math
import random

import pytest

from agent_memory.search.vectors import QueryVector, decode, encode, model_tag

TAG = model_tag("openai:m", 1024)


def _cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _random(n, seed):
    rng = random.Random(seed)
    return [rng.gauss(0, 1) for _ in range(n)]


def test_int8_quantization_moves_a_cosine_by_less_than_0_01():
    for seed in range(20):
        a, b = _random(384, seed), _random(384, seed + 100)
        b = [x + 0.8 * y for x, y in zip(a, b, strict=True)]  # related vectors, cosine around 0.8
        stored = decode(encode(b, tag=TAG), tag=TAG)
        assert stored is not None
        assert abs(QueryVector(a).cosine(stored) - _cosine(a, b)) < 0.01


def test_zero_padding_changes_nothing_and_is_not_stored():
    a, b = _random(384, 1), _random(384, 2)
    padded_a, padded_b = a + [0.0] * 640, b + [0.0] * 640

    blob = encode(padded_b, tag=TAG)

    assert len(blob) == 9 + 384
    stored = decode(blob, tag=TAG)
    assert stored is not None
    assert QueryVector(padded_a).cosine(stored) == pytest.approx(QueryVector(a).cosine(stored))
    assert QueryVector(padded_a).cosine(stored) == pytest.approx(_cosine(a, b), abs=0.01)


def test_a_vector_of_another_model_or_a_corrupt_one_is_not_decoded():
    blob = encode(_random(16, 3), tag=TAG)

    assert decode(blob, tag=model_tag("openai:other", 1024)) is None
    assert decode(blob, tag=model_tag("openai:m", 384)) is None
    assert decode(b"\x01\x02", tag=TAG) is None
    assert decode(b"\x02" + blob[1:], tag=TAG) is None


@pytest.mark.parametrize("vector", [[0.0] * 8, [float("nan")] * 8, []])
def test_a_vector_without_direction_is_refused(vector):
    with pytest.raises(ValueError):
        encode(vector, tag=TAG)


def test_a_query_of_another_length_compares_on_the_common_part():
    stored = decode(encode([1.0, 0.0, 1.0], tag=TAG), tag=TAG)
    assert stored is not None

    assert QueryVector([1.0, 0.0, 1.0, 0.0, 0.0]).cosine(stored) == pytest.approx(1.0)
    assert QueryVector([0.0, 1.0]).cosine(stored) == pytest.approx(0.0)


def test_many_cosines_at_once_equal_the_one_by_one_ones():
    stored = [decode(encode(_random(n, seed), tag=TAG), tag=TAG) for seed, n in enumerate((384, 380, 16, 384))]
    query = QueryVector(_random(384, 99) + [0.0] * 640)

    assert query.cosines(stored) == pytest.approx([query.cosine(v) for v in stored], abs=1e-5)
