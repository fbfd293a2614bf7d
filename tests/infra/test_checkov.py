"""checkov, an IaC security scanner, finds nothing in template.yaml beyond the skips that .checkov.yaml explains."""

from __future__ import annotations

import re

from local.template import ROOT
from tests.support.checkov import CONFIG, needs_checkov, scan


@needs_checkov
def test_checkov_finds_nothing_in_the_template_with_or_without_the_notes_index(tmp_path):
    """checkov keeps only the resources whose conditions hold for the parameters' defaults, so the template is
    scanned once per value of NotesIndex, the parameter that decides whether the index's resources exist."""
    source = (ROOT / "template.yaml").read_text()
    default = "    Default: none\n    AllowedValues: [none, create, existing]"
    assert default in source
    passed = {}
    for notes_index in ("none", "create", "existing"):
        template = tmp_path / f"template-{notes_index}.yaml"
        template.write_text(source.replace(default, default.replace("none", notes_index, 1)))
        passed[notes_index] = scan(template)["summary"]["passed"]
    # The domain, the indexer, its role and queue were scanned: more checks passed than without them.
    assert passed["create"] > passed["none"] > 0
    assert passed["existing"] > passed["none"]


def test_every_deliberate_skip_gives_its_reason():
    lines = CONFIG.read_text().splitlines()
    start = lines.index("skip-check:")
    skips = [line for line in lines[start + 1 :] if line.startswith("  - ")]
    assert skips
    for line in skips:
        assert re.match(r"^  - CKV2?_[A-Z]+_\d+\s+# \S.{20,}$", line), f"a skip without a reason: {line!r}"
