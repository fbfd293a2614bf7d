"""The OpenSearch tier's rule for a node that cannot be had: skipped with one line, except on CI."""

from __future__ import annotations

import os

import pytest

START_TIMEOUT_S = 120


def unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"OpenSearch tier: {reason} (CI=true: the tier must run)")
    pytest.skip(f"OpenSearch tier skipped: {reason}")
