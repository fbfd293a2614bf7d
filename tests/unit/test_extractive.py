"""``MEMORY_CHAT_MODEL=local:extractive`` and ``none``: the memory's own calls without a model."""

from __future__ import annotations

import pytest

from agent_memory.basics.errors import DocumentTooLarge, ModelUnavailable
from agent_memory.basics.settings import Settings
from agent_memory.consolidation.folding import propose
from agent_memory.domain.document import HARD_LIMIT, Document
from agent_memory.domain.fold import DueNote
from agent_memory.domain.prompts import COMPRESSION_SYSTEM, FLUSH_SYSTEM, flush_prompt
from agent_memory.memory.compression import compress
from agent_memory.providers.chat import ExtractiveChatModel, chat_model_from_settings, extractive_note

MESSAGES = [
    ("user", "Can you help me plan the Q1 migration of the billing service? It is due soon."),
    ("assistant", "Sure. We need a cutover date and a rollback plan. Which week suits you?"),
    ("user", "Probably January 12. I still need to ask Dana about <sign-off> & payments."),
]


def test_the_settings_take_local_extractive_and_none():
    assert Settings(chat_model="local:extractive").chat_model == "local:extractive"
    assert Settings(chat_model="none").chat_model is None
    assert Settings(chat_model=" NONE ").chat_model is None
    assert isinstance(
        chat_model_from_settings(Settings(chat_model="local:extractive"), timeout_s=1), ExtractiveChatModel
    )
    assert chat_model_from_settings(Settings(chat_model="none"), timeout_s=1) is None
    with pytest.raises(ValueError, match="MEMORY_CHAT_MODEL"):
        Settings(chat_model="local:minilm")


def test_the_flush_note_says_what_the_conversation_is_about_and_its_last_open_question():
    note = ExtractiveChatModel().complete(system=FLUSH_SYSTEM, prompt=flush_prompt(MESSAGES), max_tokens=300)

    assert note == (
        "Conversation about: Can you help me plan the Q1 migration of the billing service? "
        "Last open question: Which week suits you?"
    )


def test_the_note_is_at_most_500_characters_and_says_when_nothing_is_open():
    note = extractive_note([("user", "word " * 400), ("assistant", "Done. " * 200)])
    assert len(note) <= 500 and note.endswith("No open question.")
    assert extractive_note([]) == "Conversation about: an unknown subject. No open question."


def test_it_writes_no_document_so_compression_and_consolidation_act_as_without_a_model():
    model = ExtractiveChatModel()
    with pytest.raises(ModelUnavailable):
        model.complete(system=COMPRESSION_SYSTEM, prompt="x", max_tokens=5)
    with pytest.raises(DocumentTooLarge, match="no chat model"):
        compress(model, "x" * (HARD_LIMIT + 1))
    note = DueNote("u#u-1", "note#2026-11-20#1", "2026-11-20", 1, "moved to Lisbon", "2026-11-20T09:00:00Z")

    proposal = propose(model, Document("# Memory", 1, None), [note])

    assert (proposal.kind, proposal.content) == ("model_free", "# Memory\n\n## Notes\n- [2026-11-20] moved to Lisbon")
    assert proposal.edits == [
        {"op": "add", "after": None, "text": "\n## Notes\n- [2026-11-20] moved to Lisbon", "notes": ["2026-11-20.1"]}
    ]
