"""A setting the service cannot use stops it at start, with one line naming the variable (issue 16, item 9):
the local stack exits, a Lambda's initialisation fails; never a 500 on every request."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agent_memory.basics.settings import SettingsError, get_settings, require_valid_settings
from tests.support.startup import ROOT, environment_with

BAD = {"MEMORY_CONSOLIDATION_MAX_NOTES": "0"}
LINE = "MEMORY_CONSOLIDATION_MAX_NOTES=0 is refused: Input should be greater than or equal to 1"


@pytest.mark.parametrize(
    "variable, value",
    [
        ("MEMORY_CONSOLIDATION_MAX_NOTES", "0"),
        ("MEMORY_DYNAMODB_MAX_ATTEMPTS", "three"),
        ("MEMORY_CHAT_MODEL", "gpt-4o"),
        ("MEMORY_NOW", "yesterday"),
        ("MEMORY_RECALL_NEIGHBOURS", "4"),
        ("MEMORY_RECALL_QUESTION_WEIGHT", "1.5"),
        ("OPENSEARCH_ENDPOINT", "localhost:9200"),
        ("OPENSEARCH_ENDPOINT", "https://"),
        ("OPENSEARCH_ENDPOINT", "http://127.0.0.1:99999"),
        ("OPENSEARCH_ENDPOINT", "ftp://127.0.0.1:9200"),
    ],
)
def test_the_refusal_is_one_line_naming_the_variable(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    get_settings.cache_clear()

    with pytest.raises(SettingsError) as refused:
        require_valid_settings()

    message = str(refused.value)
    assert message.startswith(f"{variable}={value} is refused: ") and "\n" not in message


def test_local_minilm_with_fewer_dimensions_than_its_vectors_is_refused_in_one_line(monkeypatch):
    """all-MiniLM-L6-v2 makes 384 numbers a vector: a smaller MEMORY_EMBEDDING_DIMENSIONS is a setting it cannot use,
    refused with the others rather than by a traceback when the model is first built."""
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "local:minilm")
    monkeypatch.setenv("MEMORY_EMBEDDING_DIMENSIONS", "100")
    get_settings.cache_clear()

    with pytest.raises(SettingsError) as refused:
        require_valid_settings()

    assert str(refused.value) == (
        "MEMORY_EMBEDDING_DIMENSIONS=100 is refused: Value error, "
        "local:minilm makes 384-number vectors: MEMORY_EMBEDDING_DIMENSIONS=100 is too small"
    )
    monkeypatch.setenv("MEMORY_EMBEDDING_DIMENSIONS", "384")
    get_settings.cache_clear()
    assert require_valid_settings().embedding_dimensions == 384
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "bedrock:amazon.titan-embed-text-v2:0")
    monkeypatch.setenv("MEMORY_EMBEDDING_DIMENSIONS", "256")
    get_settings.cache_clear()
    assert require_valid_settings().embedding_dimensions == 256


def test_a_lambda_initialisation_fails_with_that_line():
    code = "from local.template import load_handler; load_handler('ToolsFunction')"

    done = subprocess.run(
        [sys.executable, "-c", code], env=environment_with(**BAD), capture_output=True, text=True, timeout=120, cwd=ROOT
    )

    assert done.returncode != 0
    assert f"SettingsError: {LINE}" in done.stderr


def test_the_local_stack_exits_at_start_with_that_line():
    env = environment_with(**BAD, MEMORY_API_PORT="3016", MEMORY_LAMBDA_PORT="3116")

    done = subprocess.run(
        [sys.executable, "-m", "local.server"], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT
    )

    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == LINE
