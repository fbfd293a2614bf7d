"""The SAM CLI (``.venv-sam``) for the template's tests: whether it is there, and the SAM transform as
CloudFormation runs it, to read the resources a deploy creates."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from local.template import ROOT

SAM = os.environ.get("SAM_CLI") or shutil.which("sam")
needs_sam = pytest.mark.skipif(
    not SAM or not Path(SAM).exists(), reason="the SAM CLI is installed by `make test` (.venv-sam)"
)

# Run by the SAM CLI's own interpreter (samtranslator is its dependency), with the code locations that
# `sam package` would give.
_TRANSFORM = """
import json, sys
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

class NoManagedPolicyNames:  # the template names none; SAM asks IAM for the map only to resolve names
    def load(self):
        return {}

template = yaml_parse(open(sys.argv[1]).read())
for resource in template["Resources"].values():
    for location in ("CodeUri", "ContentUri"):
        if location in resource.get("Properties", {}):
            resource["Properties"][location] = "s3://bucket/key"
print(json.dumps(transform(template, {}, NoManagedPolicyNames())))
"""


def transformed_template() -> dict[str, Any]:
    """template.yaml after the SAM transform: plain CloudFormation, its conditions still unresolved."""
    python = Path(SAM or "").parent / "python"
    ran = subprocess.run(
        [str(python), "-c", _TRANSFORM, str(ROOT / "template.yaml")],
        env={**os.environ, "AWS_DEFAULT_REGION": "eu-west-1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    transformed: dict[str, Any] = json.loads(ran.stdout)
    return transformed
