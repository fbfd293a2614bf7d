"""The OpenSearch tier: a real single node (k-NN plugin), started and stopped by the test session on a free port.

Needs Java 17+ and, once, Maven (``local/opensearch.py`` fetches the distribution). Without them the tier
is skipped with one line saying why, except on CI (``CI=true``), where a node that cannot start fails the run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory.search.notes_index import NotesIndex, make_opensearch_client
from tests.conftest import _free_port

START_TIMEOUT_S = 120


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"OpenSearch tier: {reason} (CI=true: the tier must run)")
    pytest.skip(f"OpenSearch tier skipped: {reason}")


@pytest.fixture(scope="session")
def opensearch_endpoint() -> Iterator[str]:
    from local import opensearch

    if opensearch.java_home() is None:
        _unavailable("no Java 17+ (set JAVA_HOME or put java on PATH)")
    if not (opensearch.HOME / "plugins" / "opensearch-knn").is_dir() and shutil.which("mvn") is None:
        _unavailable("OpenSearch is not in .cache/opensearch and Maven (mvn) is not there to fetch it")
    try:
        opensearch.prepare()
    except (OSError, subprocess.CalledProcessError, RuntimeError) as error:
        _unavailable(f"could not fetch or install OpenSearch: {error}")
    port = _free_port()
    # Not pytest's tmp_path: that is private to the user, and as root the node runs as nobody.
    data = Path(tempfile.mkdtemp(prefix="opensearch-node-"))
    data.chmod(0o755)
    log = (data / "node.log").open("wb")
    node = opensearch.start_node(port, data, stdout=log, stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            if node.poll() is not None:
                _unavailable(f"the node exited with {node.returncode}; see {data / 'node.log'}")
            try:
                url = f"{endpoint}/_cluster/health?wait_for_status=yellow&timeout=1s"
                with urllib.request.urlopen(url, timeout=2) as answer:
                    if json.load(answer)["status"] in ("yellow", "green"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                _unavailable(f"the node did not start within {START_TIMEOUT_S} s; see {data / 'node.log'}")
            time.sleep(0.25)
        yield endpoint
    finally:
        node.terminate()
        try:
            node.wait(timeout=30)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()
        log.close()
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def notes_index(opensearch_endpoint: str, request: pytest.FixtureRequest) -> Iterator[NotesIndex]:
    """A fresh alias (and its versioned index) per test, on the session's node."""
    client = make_opensearch_client(opensearch_endpoint, timeout_s=10)
    alias = f"notes-{request.node.name.lower().replace('[', '-').replace(']', '')[:40]}-{time.monotonic_ns()}"
    index = NotesIndex(client, alias=alias)
    index.ensure()
    yield index
    client.indices.delete(index=f"{alias}-v*")


@pytest.fixture
def opensearch_client(opensearch_endpoint: str) -> Any:
    return make_opensearch_client(opensearch_endpoint, timeout_s=10)
