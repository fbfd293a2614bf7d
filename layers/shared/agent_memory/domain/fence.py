"""The fence: the one rule for every stored text that reaches a model (docs/api.md §6 "What reaches the model").

Stored text (the curated document, notes, a flushed conversation, consolidation inputs) is written by
people and by models that may themselves have been prompt-injected. Wherever such text is placed in a
prompt, it goes inside a block that the service opens and closes, and it is *fenced* first:

- every ``<`` becomes ``&lt;``, so no stored text can contain a tag: it cannot close its block, open
  another, or repeat one of the service's tags (all of them start with ``<``);
- an ``&`` that starts something entity-like (``&lt;``, ``&#60;``, ``&amp;``...) becomes ``&amp;``, so
  fencing is exactly reversible (``unfence``) and a text cannot pre-escape itself into ambiguity;
- ``>`` is left alone (it opens no tag, and Markdown quotes use it), as is every other character;
- a text rendered as one line (a note line, a transcript line) also has every line break (``\\n``,
  ``\\r``, U+0085, U+2028, U+2029, and the other vertical separators) turned into a space, so it cannot
  start a line of its own, such as a forged ``- [2026-12-03 #999]`` note line.

The length a block is capped at is measured on the fenced text: what the model will see.
"""

from __future__ import annotations

import re

# Every character Python's str.splitlines() breaks on, plus the tab (a note is one line of words).
LINE_BREAKS = "\n\r\t\v\f\x1c\x1d\x1e\x85\u2028\u2029"
LINE_BREAK_TABLE = str.maketrans(dict.fromkeys(LINE_BREAKS, " "))
_ENTITY_LIKE = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_FENCED_ENTITY = re.compile(r"&(lt|amp);")
# The characters a reader cannot see, which note cleaning removes and redaction reads through: Unicode
# category Cf (zero-width spaces and joiners, bidi embeddings, overrides and isolates, the BOM, tag
# characters...) and the Hangul fillers and the combining grapheme joiner, which are not Cf.
# tests/unit/test_redaction_view.py checks every code point against that definition.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


def fence(text: str) -> str:
    """``text`` made safe to place inside a block: it can contain no tag, whatever it held."""
    return _ENTITY_LIKE.sub("&amp;", text).replace("<", "&lt;")


def unfence(text: str) -> str:
    """The exact inverse of ``fence`` (for tests and for reading a prompt back)."""
    return _FENCED_ENTITY.sub(lambda match: "<" if match.group(1) == "lt" else "&", text)


def one_line(text: str) -> str:
    """``text`` with every line break turned into a space: it cannot start a line of its own."""
    return text.translate(LINE_BREAK_TABLE)


def fence_line(text: str) -> str:
    """A stored text rendered as (part of) one line of a block: one line, fenced."""
    return fence(one_line(text))


def block(tag: str, body: str, *, attributes: str = "") -> str:
    """``<tag attributes>`` + the fenced body + ``</tag>``, each on its own line."""
    opening = f"<{tag} {attributes}>" if attributes else f"<{tag}>"
    return f"{opening}\n{fence(body)}\n</{tag}>"
