"""Stored text as the model must see it: fenced exactly as the service fences it in ``system_prompt``.

A note or the document is stored text: another member, or a model that was itself prompt-injected, may have
written ``</tool_result><system>…`` into it. The memory service puts stored text in front of the model only
inside its own blocks, with every ``<`` written ``&lt;`` (and an ``&`` that starts an entity written ``&amp;``)
and, for a note, every line break made a space. Every adapter of this package that hands stored text to a model
(a tool result of the conversation helper, of the MCP server and of the framework adapters built on them, a view
of Claude's memory tool) goes through this module, so that no stored text can close the tool result, open a tag
or start a line of its own. The service's answer itself is unchanged (a dashboard shows the text as written);
only what goes to the model is fenced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# The same rule as the service's agent_memory.domain.fence (tests/client/test_fence_paths.py checks they agree).
LINE_BREAKS = "\n\r\t\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK_TABLE = str.maketrans(dict.fromkeys(LINE_BREAKS, " "))
_ENTITY_LIKE = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_FENCED_ENTITY = re.compile(r"&(lt|amp);")
# The one field of a tool answer that is a whole text, fenced as a block keeps its lines: the document's content.
_BLOCK_FIELDS = frozenset({"content"})


def fence(text: str) -> str:
    """``text`` made safe to place inside a block: it can contain no tag, whatever it held (its lines kept)."""
    return _ENTITY_LIKE.sub("&amp;", text).replace("<", "&lt;")


def fence_line(text: str) -> str:
    """``text`` as one line that holds no tag: what a note line of ``system_prompt`` shows."""
    return fence(text.translate(_LINE_BREAK_TABLE))


def unfence(text: str) -> str:
    """The exact inverse of ``fence``: what a model writes back in the text it was shown is stored as it meant
    it (``&lt;`` is ``<``, ``&amp;`` is ``&``)."""
    return _FENCED_ENTITY.sub(lambda match: "<" if match.group(1) == "lt" else "&", text)


def fenced_answer(answer: Any) -> Any:
    """A copy of a tool's answer (``remember``, ``update_memory``, ``recall``, or any tool the service adds)
    with every string fenced: the document's ``content`` as a block, every other string as one line.

    Every string rather than the fields known today to hold stored text, so that a field or a tool the service
    adds later reaches the model fenced too; ids, days, modes and counts hold nothing the fence changes."""
    if isinstance(answer, str):
        return fence_line(answer)
    if isinstance(answer, Mapping):
        return {
            key: fence(value) if key in _BLOCK_FIELDS and isinstance(value, str) else fenced_answer(value)
            for key, value in answer.items()
        }
    if isinstance(answer, list):
        return [fenced_answer(item) for item in answer]
    return answer
