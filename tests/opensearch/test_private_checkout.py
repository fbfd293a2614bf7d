"""A checkout under a folder only its owner may enter (``mktemp -d``, a home directory of mode 0700) starts a
node: as root the node runs as ``nobody``, who could not reach an installation inside such a checkout (it
exited with 126 before any test ran)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from local.opensearch import CACHE, VERSION, java_home
from local.template import ROOT
from tests.support.calls import free_port
from tests.support.opensearch import START_TIMEOUT_S, unavailable

pytestmark = pytest.mark.slow

# Run in the copied checkout: its own local.opensearch, whose ROOT is that checkout.
_START_AND_ASK = """
import json, sys, urllib.request
from local.opensearch import throwaway_node
with throwaway_node(int(sys.argv[1]), start_timeout_s=float(sys.argv[2])) as endpoint:
    with urllib.request.urlopen(endpoint, timeout=10) as answer:
        print("answered: OpenSearch", json.load(answer)["version"]["number"])
"""


def test_a_checkout_under_a_private_folder_starts_its_node() -> None:
    if java_home() is None:
        unavailable("no Java 17+ (set JAVA_HOME or put java on PATH)")
    if not (CACHE / f"opensearch-{VERSION}" / "plugins" / "opensearch-knn").is_dir() and not shutil.which("mvn"):
        unavailable("OpenSearch is not installed and Maven (mvn) is not there to fetch it")
    private = Path(tempfile.mkdtemp(prefix="private-"))
    try:
        assert private.stat().st_mode & 0o777 == 0o700
        checkout = private / "p"
        shutil.copytree(ROOT / "local", checkout / "local", ignore=shutil.ignore_patterns("__pycache__"))
        ran = subprocess.run(
            [sys.executable, "-c", _START_AND_ASK, str(free_port()), str(START_TIMEOUT_S)],
            cwd=checkout,
            env={**os.environ, "PYTHONPATH": str(checkout)},
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S + 300,  # a first install fetches from Maven Central
            check=False,
        )
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert f"answered: OpenSearch {VERSION}" in ran.stdout  # after Maven's output on a first install
    finally:
        shutil.rmtree(private, ignore_errors=True)
