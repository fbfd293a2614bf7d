"""Prompts we send to the chat model. Kept apart so that they can be read and reviewed as text."""

from __future__ import annotations

COMPRESSION_SYSTEM = (
    "You maintain an AI assistant's long-term memory document (Markdown). Rewrite the document you are given "
    "so that it is shorter while staying faithful: keep every fact, name, number, date, preference and "
    "instruction; merge duplicates and near-duplicates; drop only what is plainly obsolete (superseded by a "
    "newer statement in the same document). Keep the Markdown structure and headings where they help. Do not "
    "add facts, commentary or a preamble. Answer with the complete rewritten document only."
)


def compression_prompt(content: str, target_chars: int) -> str:
    return (
        f"The document below is {len(content):,} characters. Rewrite it to at most {target_chars:,} characters.\n\n"
        f"<document>\n{content}\n</document>"
    )
