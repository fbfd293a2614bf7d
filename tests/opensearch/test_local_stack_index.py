"""``make run`` with ``OPENSEARCH_ENDPOINT`` and an embedding model: remembered notes reach the index, with
their vectors, through the local stream mapping, and recall is hybrid."""

from __future__ import annotations

import time

import pytest

from agent_memory.providers.notes_index import NotesIndex
from tests.support.fake_openai import fake_openai_server
from tests.support.stack import README_CONTEXT, http, remember, running_stack

pytestmark = pytest.mark.slow


def test_a_remembered_note_reaches_the_index_and_recall_is_hybrid(opensearch_endpoint, opensearch_client, tmp_path):
    index = NotesIndex(opensearch_client)  # the stack's own alias, `notes`
    try:
        with (
            fake_openai_server(reply="unused") as model,
            running_stack(
                tmp_path,
                OPENSEARCH_ENDPOINT=opensearch_endpoint,
                MEMORY_EMBEDDING_MODEL="openai:fake-embeddings",
                OPENAI_BASE_URL=model.base_url,
            ) as stack,
        ):
            assert "Indexer        stream of MemoryTable -> IndexerFunction" in stack.stderr()
            assert remember(stack, README_CONTEXT, "Prefers metric units").status == 201
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                if opensearch_client.indices.exists_alias(name="notes"):
                    index.refresh()
                    if index.count("user#u-1") == 1:
                        break
                time.sleep(0.2)
            assert index.count("user#u-1") == 1
            assert index.count_without_vector("user#u-1") == 0
            recall = {"context": README_CONTEXT, "arguments": {"query": "metric"}}
            answer = http(stack, "POST", "/v1/tools/recall", recall)
            assert [note["text"] for note in answer.body["notes"]] == ["Prefers metric units"]
            assert answer.body["mode"] == "hybrid"
    finally:
        opensearch_client.indices.delete(index="notes-v*", ignore_unavailable=True)
