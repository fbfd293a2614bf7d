"""A plain moto server: ``moto_server`` as a subprocess, none of local/moto_fast.py's patches, the template's
tables on it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3

from local.template import table_definitions
from tests.support.calls import free_port


@contextmanager
def moto_server(*, streams: bool = True) -> Iterator[str]:
    """A moto server in its own process (so no patch of this one reaches it), the template's tables on it:
    its endpoint. ``streams=False``: the tables start without their streams, until ``start_streams``."""
    port = free_port()
    server = Path(sys.executable).with_name("moto_server")
    # Nothing of the project runs in it: coverage (which `make test` starts in every Python subprocess) would
    # only trace moto there, each of its calls: under `make test` that more than doubled a plain moto night.
    environment = {name: value for name, value in os.environ.items() if name != "COVERAGE_PROCESS_CONFIG"}
    process = subprocess.Popen(
        [str(server), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment,
    )
    try:
        endpoint = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        client = boto3.client("dynamodb", endpoint_url=endpoint)
        for definition in table_definitions().values():
            if not streams:
                definition.pop("StreamSpecification", None)
            client.create_table(**definition)
        yield endpoint
    finally:
        process.kill()
        process.wait(timeout=10)


def start_streams(client: Any) -> None:
    """Turn on the streams the template declares, on tables that ``moto_server(streams=False)`` started without:
    the writes made before are in no stream.

    Plain moto keeps every stream record for good and copies them all, with the table, once per item of every
    TransactWriteItems; DynamoDB keeps a stream's records for 24 hours. Notes written days before a night were
    in no stream that night on DynamoDB: written with the stream off, they do not make each of the night's
    transactions copy their records on plain moto (120 one-note scopes: the night 291 s -> 89 s, their notes
    written in 10 s, not 40 s)."""
    for definition in table_definitions().values():
        if "StreamSpecification" in definition:
            client.update_table(
                TableName=definition["TableName"], StreamSpecification=definition["StreamSpecification"]
            )
