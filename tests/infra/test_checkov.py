"""checkov, an IaC security scanner, finds nothing in template.yaml beyond the skips that .checkov.yaml explains."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from local.template import ROOT

CHECKOV = os.environ.get("CHECKOV") or shutil.which("checkov")
needs_checkov = pytest.mark.skipif(
    not CHECKOV or not Path(CHECKOV).exists(), reason="checkov is installed by `make test` (.venv-checkov)"
)
CONFIG = ROOT / ".checkov.yaml"


def run_checkov(folder: Path) -> tuple[subprocess.CompletedProcess[str], dict, list[str]]:
    """checkov with the .checkov.yaml of ``folder`` on its template.yaml: the run, its report, what failed."""
    result = subprocess.run(
        [str(CHECKOV), "--config-file", ".checkov.yaml", "--output", "json"],
        cwd=folder,
        env={**os.environ, "BC_SKIP_MAPPING": "TRUE"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = json.loads(result.stdout)
    failed = [f"{c['check_id']} {c['resource']}: {c['check_name']}" for c in report["results"]["failed_checks"]]
    return result, report, failed


@needs_checkov
def test_checkov_finds_nothing_in_the_template():
    result, report, failed = run_checkov(ROOT)
    assert not failed, "\n".join(failed)
    assert report["summary"]["parsing_errors"] == 0
    assert report["summary"]["passed"] > 0
    assert result.returncode == 0, result.stderr


def test_every_deliberate_skip_gives_its_reason():
    lines = CONFIG.read_text().splitlines()
    start = lines.index("skip-check:")
    skips = [line for line in lines[start + 1 :] if line.startswith("  - ")]
    assert skips
    for line in skips:
        assert re.match(r"^  - CKV2?_[A-Z]+_\d+\s+# \S.{20,}$", line), f"a skip without a reason: {line!r}"
