"""A plain moto server for this tier (``tests/support/moto_server.py``), the service pointed at it."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest

from agent_memory import bootstrap
from tests.support.moto_server import moto_server


@pytest.fixture
def plain_moto(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The service pointed at a plain moto server; yields a client of that server. The tables' streams are off
    until the test starts them (``start_streams``), after writing its notes."""
    with moto_server(streams=False) as endpoint:
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
        monkeypatch.setenv("MEMORY_CONSOLIDATION_MAX_GROUPS", "0")
        # The notes are written with a patient client: each remember is a three-item transaction, and on plain
        # moto it grows with the table (a retry sent while the first attempt still runs meets it there).
        monkeypatch.setenv("MEMORY_DYNAMODB_READ_TIMEOUT_S", "60")
        bootstrap.reset()
        yield boto3.client("dynamodb", endpoint_url=endpoint)
