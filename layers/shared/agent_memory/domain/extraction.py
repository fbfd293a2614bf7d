"""What an extraction asks the chat model for and how its answer is read (docs/api.md §3 ``extract``).

The model is offered one function, ``save_facts``, and required to call it (as a fold is asked for its edits):
``{"facts": [{"text", "messages": [message indexes]}]}``. Of its answer, at most ``MAX_FACTS`` facts are read, in
its order; a fact's ``messages`` keep only indexes of the request's messages, and a fact left citing none is
dropped (it comes from nowhere the caller sent). A fact's text is cut to ``FACT_MAX_CHARS`` by the text
pipeline, which redacts and cleans it as any note (``FACT``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agent_memory.domain.text_pipeline import Form

SAVE_FACTS = "save_facts"
MAX_FACTS = 10
FACT_MAX_CHARS = 300
FACT = Form(one_line=True, max_chars=FACT_MAX_CHARS)
SAVE_FACTS_DESCRIPTION = (
    "Save the conversation's durable facts to long-term memory, each citing the numbers of the messages it "
    "comes from. Call it with an empty list when nothing is worth keeping."
)
FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": MAX_FACTS,
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "maxLength": FACT_MAX_CHARS, "description": "One plain sentence."},
                    "messages": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": 0},
                        "minItems": 1,
                        "description": "The numbers of the messages the fact comes from.",
                    },
                },
                "required": ["text", "messages"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["facts"],
    "additionalProperties": False,
}


class UnreadableFacts(ValueError):
    """The model's answer holds no ``save_facts`` call, nor a JSON object that could be one."""


@dataclass(frozen=True, slots=True)
class Fact:
    """A proposed fact, as the model wrote it, and the indexes of the messages it cites (sorted, distinct)."""

    text: str
    messages: tuple[int, ...]


def facts_of(arguments: dict[str, Any] | None, text: str, message_count: int) -> list[Fact]:
    """The facts of the model's answer: its call's ``arguments``, or (a server without tool calls) its ``text``
    when that is the same JSON object. Raises UnreadableFacts when there is neither."""
    if arguments is None:
        try:
            arguments = json.loads(text.strip().removeprefix("```json").removesuffix("```"))
        except ValueError:
            raise UnreadableFacts("the chat model answered without calling save_facts") from None
    proposed = arguments.get("facts") if isinstance(arguments, dict) else None
    if not isinstance(proposed, list):
        raise UnreadableFacts("the chat model's save_facts call holds no list of facts")
    facts: list[Fact] = []
    for raw in proposed[:MAX_FACTS]:
        fact = _fact(raw, message_count)
        if fact is not None:
            facts.append(fact)
    return facts


def _fact(raw: object, message_count: int) -> Fact | None:
    """One proposed fact, or None: not an object with a text, or citing no message of the request."""
    if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not isinstance(raw.get("messages"), list):
        return None
    cited = {
        index
        for index in raw["messages"]
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < message_count
    }
    return Fact(raw["text"], tuple(sorted(cited))) if cited else None
