"""``MEMORY_CHAT_MODEL=local:extractive`` and ``none``: the memory's own calls without a model. Neither is a chat
model: with ``local:extractive`` the flush summarises the messages itself (``memory.summary``,
tests/unit/test_flush_summary.py), and compression and consolidation do what they do without a model."""

from __future__ import annotations

import pytest

from agent_memory.basics.errors import DocumentTooLarge
from agent_memory.basics.settings import Settings
from agent_memory.consolidation.folding import propose
from agent_memory.domain.document import HARD_LIMIT, Document
from agent_memory.domain.fold import DueNote
from agent_memory.memory.compression import compress
from agent_memory.providers.chat import chat_model_from_settings


def test_the_settings_take_local_extractive_and_none_and_neither_is_a_chat_model():
    assert Settings(chat_model="local:extractive").chat_model == "local:extractive"
    assert Settings(chat_model="none").chat_model is None
    assert Settings(chat_model=" NONE ").chat_model is None
    assert chat_model_from_settings(Settings(chat_model="local:extractive"), timeout_s=1) is None
    assert chat_model_from_settings(Settings(chat_model="none"), timeout_s=1) is None
    with pytest.raises(ValueError, match="MEMORY_CHAT_MODEL"):
        Settings(chat_model="local:minilm")


def test_compression_and_consolidation_act_as_without_a_model():
    model = chat_model_from_settings(Settings(chat_model="local:extractive"), timeout_s=1)
    with pytest.raises(DocumentTooLarge, match="no chat model"):
        compress(model, "x" * (HARD_LIMIT + 1))
    note = DueNote("u#u-1", "note#2026-11-20#1", "2026-11-20", 1, "moved to Lisbon", "2026-11-20T09:00:00Z")

    proposal = propose(model, Document("# Memory", 1, None), [note])

    assert (proposal.kind, proposal.content) == ("model_free", "# Memory\n\n## Notes\n- [2026-11-20] moved to Lisbon")
    assert proposal.edits == [
        {"op": "add", "after": None, "text": "\n## Notes\n- [2026-11-20] moved to Lisbon", "notes": ["2026-11-20.1"]}
    ]
