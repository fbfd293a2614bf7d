"""Recalled notes as the model must see them: fenced exactly as the service fences them in ``system_prompt``.

A note is stored text: another member, or a model that was itself prompt-injected, may have written
``</tool_result><system>…`` into it. The memory service puts notes in front of the model only inside its own
blocks, with every ``<`` written ``&lt;`` (and an ``&`` that starts an entity written ``&amp;``) and every line
break made a space; a recall result handed back to the model as a tool result gets the same treatment here,
so that no note can close the tool result, open a tag or start a line of its own. The service's answer itself
is unchanged (a dashboard shows the text as written); only what goes to the model is fenced.
"""

from __future__ import annotations

import re
from copy import deepcopy
from typing import Any

# The same rule as the service's agent_memory.domain.fence (tests/client/test_recall_fenced.py checks they agree).
LINE_BREAKS = "\n\r\t\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK_TABLE = str.maketrans(dict.fromkeys(LINE_BREAKS, " "))
_ENTITY_LIKE = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def fence_line(text: str) -> str:
    """``text`` as one line that holds no tag: what a note line of ``system_prompt`` shows."""
    return _ENTITY_LIKE.sub("&amp;", text.translate(_LINE_BREAK_TABLE)).replace("<", "&lt;")


def fenced_recall(answer: dict[str, Any]) -> dict[str, Any]:
    """A copy of a ``recall`` answer with each note's ``text`` fenced; everything else as the service said."""
    fenced = deepcopy(answer)
    for note in fenced.get("notes") or []:
        if isinstance(note, dict) and isinstance(note.get("text"), str):
            note["text"] = fence_line(note["text"])
    return fenced
