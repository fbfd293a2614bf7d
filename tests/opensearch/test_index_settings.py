"""A new notes index takes its vector size, shards and replicas from the settings, and a function whose
``MEMORY_EMBEDDING_DIMENSIONS`` differs from the live index stops at start with one line (issue 15, "Also")."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from agent_memory.providers.notes_index import IndexMappingMismatch, NotesIndex
from tests.support.startup import ROOT, environment_with


def test_a_new_index_takes_its_dimensions_shards_and_replicas_from_the_settings(opensearch_client):
    alias = f"notes-sized-{time.monotonic_ns()}"
    try:
        NotesIndex(opensearch_client, alias=alias, dimensions=256, shards=2, replicas=1).ensure()

        name = f"{alias}-v3"
        settings = opensearch_client.indices.get_settings(index=name)[name]["settings"]["index"]
        mapping = opensearch_client.indices.get_mapping(index=name)[name]["mappings"]["properties"]
        assert (settings["number_of_shards"], settings["number_of_replicas"]) == ("2", "1")
        assert mapping["embedding"]["dimension"] == 256
        assert NotesIndex(opensearch_client, alias=alias, dimensions=256).check_mapping() is True
        with pytest.raises(IndexMappingMismatch) as refused:
            NotesIndex(opensearch_client, alias=alias, dimensions=1024).check_mapping()
        assert str(refused.value) == (
            f"index {name} holds vectors of 256 dimensions but MEMORY_EMBEDDING_DIMENSIONS is 1024:"
            " set it to 256, or reindex into a new index version"
        )
    finally:
        opensearch_client.indices.delete(index=f"{alias}-v*", ignore_unavailable=True)


@pytest.mark.parametrize("function", ["ToolsFunction", "IndexerFunction", "ManagementFunction"])
def test_a_function_whose_dimensions_differ_from_the_index_fails_its_initialisation_with_one_line(
    opensearch_endpoint, opensearch_client, function
):
    NotesIndex(opensearch_client, dimensions=512).ensure()  # the deployment's own alias, `notes`
    code = f"from local.template import load_handler; load_handler({function!r})"
    try:
        env = environment_with(OPENSEARCH_ENDPOINT=opensearch_endpoint, MEMORY_TABLE_NAME="MemoryTable")
        refused = subprocess.run(
            [sys.executable, "-c", code],
            env=env | {"MEMORY_EMBEDDING_DIMENSIONS": "1024"},
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        started = subprocess.run(
            [sys.executable, "-c", code],
            env=env | {"MEMORY_EMBEDDING_DIMENSIONS": "512"},
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
    finally:
        opensearch_client.indices.delete(index="notes-v*", ignore_unavailable=True)

    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines()[-1] == (
        "agent_memory.providers.notes_index.IndexMappingMismatch: index notes-v3 holds vectors of 512 dimensions"
        " but MEMORY_EMBEDDING_DIMENSIONS is 1024: set it to 512, or reindex into a new index version"
    )
    assert started.returncode == 0, started.stderr
