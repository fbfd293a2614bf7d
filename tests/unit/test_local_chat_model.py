"""``make run``'s memory model (local/environment.py ``choose_chat_model``): ``local:extractive`` when
``MEMORY_CHAT_MODEL`` is unset or blank, said in one banner line with the way to a real model; a set one is
kept as it is."""

from __future__ import annotations

import os

import pytest

from local.environment import choose_chat_model

HOW = "set MEMORY_CHAT_MODEL=bedrock:<modelId> or openai:<model> to use a real one"


@pytest.mark.parametrize("unset", [None, "", "  "])
def test_unset_is_the_local_extractive_stand_in_and_the_line_says_how_to_use_a_real_one(
    monkeypatch: pytest.MonkeyPatch, unset: str | None
) -> None:
    if unset is None:
        monkeypatch.delenv("MEMORY_CHAT_MODEL", raising=False)
    else:
        monkeypatch.setenv("MEMORY_CHAT_MODEL", unset)

    line = choose_chat_model()

    assert os.environ["MEMORY_CHAT_MODEL"] == "local:extractive"
    assert line.startswith("  Memory model   local:extractive (no model") and HOW in line
    assert "\n" not in line


@pytest.mark.parametrize(
    ("spec", "says"),
    [("none", "none (the flush answers failed"), ("openai:gpt-4o-mini", "openai:gpt-4o-mini")],
)
def test_a_model_that_is_set_is_kept(monkeypatch: pytest.MonkeyPatch, spec: str, says: str) -> None:
    monkeypatch.setenv("MEMORY_CHAT_MODEL", spec)

    line = choose_chat_model()

    assert os.environ["MEMORY_CHAT_MODEL"] == spec
    assert line.startswith(f"  Memory model   {says}")
