"""checkov run on the template."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from local.template import ROOT

CHECKOV = os.environ.get("CHECKOV") or shutil.which("checkov")
CONFIG = ROOT / ".checkov.yaml"


needs_checkov = pytest.mark.skipif(
    not CHECKOV or not Path(CHECKOV).exists(), reason="checkov is installed by `make test` (.venv-checkov)"
)


def scan(template: Path) -> dict:
    """checkov with .checkov.yaml on ``template``; fails on any finding, else returns the report."""
    result = subprocess.run(
        [str(CHECKOV), "--config-file", str(CONFIG), "--file", str(template), "--output", "json"],
        cwd=ROOT,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = json.loads(result.stdout)
    failed = [f"{c['check_id']} {c['resource']}: {c['check_name']}" for c in report["results"]["failed_checks"]]
    assert not failed, "\n".join(failed)
    assert report["summary"]["parsing_errors"] == 0
    assert result.returncode == 0, result.stderr
    return report
