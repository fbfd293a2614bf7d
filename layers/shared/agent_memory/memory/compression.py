"""The compression rewrite: what runs when a write would cross the hard limit (docs/api.md §3 ``update_memory``)."""

from __future__ import annotations

from agent_memory.basics.errors import DocumentTooLarge
from agent_memory.basics.observability import model_tokens
from agent_memory.domain.document import HARD_LIMIT, SOFT_LIMIT
from agent_memory.domain.prompts import COMPRESSION_SYSTEM, compression_prompt
from agent_memory.providers.chat import ChatModel

# A rewrite under a fifth of the original has dropped facts, not merged them: we refuse to save it.
MIN_FAITHFUL_RATIO = 0.2
COMPRESSION_MAX_TOKENS = 8192
# The longest text a compression could ever bring under the hard limit: anything longer would need a
# rewrite under a fifth of itself, which the check above refuses. 125,000 characters (about 31,000 tokens).
COMPRESSIBLE_MAX_CHARS = int(HARD_LIMIT / MIN_FAITHFUL_RATIO)


def refuse_incompressible(content: str) -> None:
    """DocumentTooLarge for a text no compression could save, before any secret detector or model reads it."""
    if len(content) > COMPRESSIBLE_MAX_CHARS:
        raise DocumentTooLarge(
            f"the document is {len(content):,} characters; a compression rewrite must keep at least a fifth of "
            f"it and fit {HARD_LIMIT:,}, so nothing over {COMPRESSIBLE_MAX_CHARS:,} characters can be saved; "
            "nothing was sent to the model, shorten it and try again"
        )


def _unwrap_code_block(text: str) -> str:
    """Models like to wrap a document in a ```markdown code block; the block's markers are not part of the document."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and stripped.count("\n") >= 1:
        stripped = stripped[stripped.index("\n") + 1 : -3]
    return stripped.strip()


def compress(model: ChatModel | None, content: str) -> str:
    """A shorter, faithful rewrite of ``content`` that fits the hard limit, or DocumentTooLarge.

    ModelUnavailable (from the model) passes through: the write fails and nothing is saved.
    """
    if model is None:
        raise DocumentTooLarge(
            f"the document is {len(content):,} characters, over the hard limit of {HARD_LIMIT:,}, and no chat "
            "model is configured to compress it; shorten it and try again"
        )
    answer = model.ask(
        system=COMPRESSION_SYSTEM, prompt=compression_prompt(content, SOFT_LIMIT), max_tokens=COMPRESSION_MAX_TOKENS
    )
    model_tokens("compression", answer.input_tokens, answer.output_tokens)
    result = _unwrap_code_block(answer.text)
    if len(result) > HARD_LIMIT:
        raise DocumentTooLarge(
            f"compression brought the document to {len(result):,} characters, still over the hard limit of "
            f"{HARD_LIMIT:,}; shorten it and try again"
        )
    if len(result) < MIN_FAITHFUL_RATIO * len(content):
        raise DocumentTooLarge(
            f"the compression rewrite ({len(result):,} characters) dropped too much to be faithful; nothing was "
            "saved, shorten the document and try again"
        )
    return result
