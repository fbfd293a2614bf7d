"""The chat models a test scripts: handed to the object graph as its ``chat_models`` part (bootstrap.provide),
never patched into a use case."""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory import bootstrap
from agent_memory.providers.chat import ChatModel, ModelUse


@dataclass
class ScriptedChatModels:
    """The named fake of ``Services.chat_models``: the model each use is given (None: no model, as with
    ``MEMORY_CHAT_MODEL`` unset). A test sets a use's model at any time; the next call of that use asks it."""

    compression: ChatModel | None = None
    flush: ChatModel | None = None
    extraction: ChatModel | None = None
    fold: ChatModel | None = None

    def __call__(self, use: ModelUse) -> ChatModel | None:
        model: ChatModel | None = getattr(self, use)
        return model


def scripted_models() -> ScriptedChatModels:
    """This test's scripted models, provided to the graph on first use. Provide them before the test reads a part
    of the graph it keeps: providing builds the graph anew (``bootstrap.provide``)."""
    models = bootstrap.provided("chat_models")
    if not isinstance(models, ScriptedChatModels):
        models = ScriptedChatModels()
        bootstrap.provide(chat_models=models)
    return models
