"""A process started with the environment of the local stack."""

from __future__ import annotations

import os

from local.template import ROOT


def environment_with(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "OPENSEARCH", "AWS_ENDPOINT"))}
    env.update(PYTHONPATH=f"{ROOT / 'layers' / 'shared'}{os.pathsep}{ROOT}", **extra)
    return env
