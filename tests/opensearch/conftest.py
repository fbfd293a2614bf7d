"""The OpenSearch tier: a real single node (k-NN plugin), started and stopped by the test session on a free port.

Needs Java 17+ and, once, Maven (``local/opensearch.py`` fetches the distribution). Without them the tier
is skipped with one line saying why, except on CI (``CI=true``), where a node that cannot start fails the run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.providers.notes_index import NotesIndex, make_opensearch_client
from tests.support.calls import free_port
from tests.support.opensearch import START_TIMEOUT_S, HeldToTemplate, unavailable


@pytest.fixture(scope="session")
def opensearch_endpoint() -> Iterator[str]:
    from local.opensearch import NodeUnavailable, throwaway_node

    try:
        with throwaway_node(free_port(), start_timeout_s=START_TIMEOUT_S) as endpoint:
            yield endpoint
    except NodeUnavailable as why:
        unavailable(str(why))


@pytest.fixture
def notes_index(opensearch_endpoint: str, request: pytest.FixtureRequest) -> Iterator[NotesIndex]:
    """A fresh alias (and its versioned index) per test, on the session's node; a handler's requests through it
    are held to its function's grants in template.yaml (``HeldToTemplate``)."""
    client = make_opensearch_client(opensearch_endpoint, timeout_s=10, connection_class=HeldToTemplate)
    alias = f"notes-{request.node.name.lower().replace('[', '-').replace(']', '')[:40]}-{time.monotonic_ns()}"
    index = NotesIndex(client, alias=alias)
    index.ensure()
    yield index
    client.indices.delete(index=f"{alias}-v*")


@pytest.fixture
def opensearch_client(opensearch_endpoint: str) -> Any:
    """A client of the session's node, a handler's requests through it held to its function's grants."""
    return make_opensearch_client(opensearch_endpoint, timeout_s=10, connection_class=HeldToTemplate)
