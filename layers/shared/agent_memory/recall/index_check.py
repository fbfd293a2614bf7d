"""At start, the notes index must match this deployment's settings (docs/configuration.md): a function that
reads or writes the index checks its live mapping once, in its initialisation, so that vectors of another
size than ``MEMORY_EMBEDDING_DIMENSIONS`` stop it there with one line, instead of failing or degrading every
request. An index that cannot be reached now is not a mismatch: the function starts, and recall degrades
as it does whenever the index is down (the indexer checks again before its first write)."""

from __future__ import annotations

from agent_memory.basics.observability import logger
from agent_memory.providers.notes_index import IndexMappingMismatch, NotesIndex


def require_matching_index(index: NotesIndex | None) -> None:
    """``index``: this deployment's notes index, None when it has none (nothing to check)."""
    if index is None:
        return
    try:
        index.check_mapping()
    except IndexMappingMismatch:
        raise
    except Exception as error:  # noqa: BLE001 - unreachable at start is not a mismatch
        logger.warning("the notes index could not be checked at start", extra={"error": str(error)})
