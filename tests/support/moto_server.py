"""A plain moto server: ``moto_server`` as a subprocess, none of local/moto_fast.py's patches, the template's
tables on it."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import boto3

from local.template import table_definitions
from tests.support.calls import free_port


@contextmanager
def moto_server() -> Iterator[str]:
    """A moto server in its own process (so no patch of this one reaches it), the template's tables on it:
    its endpoint."""
    port = free_port()
    server = Path(sys.executable).with_name("moto_server")
    process = subprocess.Popen(
        [str(server), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
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
            client.create_table(**definition)
        yield endpoint
    finally:
        process.kill()
        process.wait(timeout=10)
