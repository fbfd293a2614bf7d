"""The curated document: one Markdown document per scope, its newest versions kept (docs/api.md §3 update_memory)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SOFT_LIMIT = 18_000
HARD_LIMIT = 25_000
# History is kept for the newest versions: saving version N deletes version N - 100, in the same transaction.
# What a scope stores (the characters quota) is every kept version plus every note, so it is bounded: without
# a bound, a history that only grows would count without end or, counted, fill the quota for good.
HISTORY_VERSIONS = 100

Reason = Literal["tool", "dashboard", "compression", "consolidation", "restore", "import"]


@dataclass(frozen=True, slots=True)
class Document:
    """One version of a scope's document. Version 0 with empty content means "none yet"."""

    content: str
    version: int
    updated_at: str | None

    @property
    def chars(self) -> int:
        return len(self.content)


EMPTY_DOCUMENT = Document(content="", version=0, updated_at=None)


@dataclass(frozen=True, slots=True)
class Author:
    """Who saved a version: a conversation, a dashboard user, or a consolidation run."""

    user_id: str | None = None
    thread_id: str | None = None
    run_id: str | None = None


def soft_limit_warnings(content: str) -> list[str]:
    if len(content) <= SOFT_LIMIT:
        return []
    return [
        f"the document is {len(content):,} characters, over the soft limit of {SOFT_LIMIT:,}; "
        f"tighten it before it reaches {HARD_LIMIT:,}, where it is compressed automatically"
    ]
