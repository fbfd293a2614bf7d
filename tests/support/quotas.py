"""Quotas set low enough for a test to reach."""

from __future__ import annotations

import pytest

from agent_memory import bootstrap


@pytest.fixture
def quotas(monkeypatch):
    def _set(notes=None, chars=None):
        if notes is not None:
            monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_DAY", str(notes))
        if chars is not None:
            monkeypatch.setenv("MEMORY_QUOTA_CHARS", str(chars))
        bootstrap.reset()

    return _set
