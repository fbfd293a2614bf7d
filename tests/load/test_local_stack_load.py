"""Load against the local stack (issue 16, item 8): 200 concurrent clients, each a new connection per
request, mixing remember, update_memory (unversioned, on four shared workspaces) and context. No reset,
no 5xx, no lost write. ``LOAD_SECONDS`` sets the duration (5 s here; the 30 s figures are in
docs/benchmarks.md, from ``python -m bench.local_load``)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from bench.local_load import run
from local.server import LocalServer
from local.token import mint
from tests.support.stack import Stack, running_stack

pytestmark = [pytest.mark.slow, pytest.mark.long]

CLIENTS = 200
SECONDS = float(os.environ.get("LOAD_SECONDS", "5"))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("load-stack")) as running:
        yield running


def test_the_listen_backlog_holds_a_burst_of_clients() -> None:
    assert LocalServer.request_queue_size >= 512  # socketserver's default, 5, reset most of 100 clients


def test_200_concurrent_clients_see_no_reset_no_5xx_and_lose_no_write(stack: Stack) -> None:
    figures = run(stack.api_port, CLIENTS, SECONDS, lambda user, workspaces: mint(user, workspaces, ttl_s=3600))
    summary = figures.summary()

    assert figures.resets == 0, summary
    assert not figures.other_errors, summary
    assert figures.server_errors == 0, summary
    assert {kind for kind, _ in figures.statuses} == {"remember", "update_memory", "context"}, summary
    assert {status for _, status in figures.statuses} <= {200, 201}, summary
    assert figures.notes and figures.versions, summary
    assert (figures.lost_notes, figures.lost_versions) == (0, 0), summary
