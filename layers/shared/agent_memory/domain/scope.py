"""Scope binding: the conversation decides the scope, never the model (docs/api.md §3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from agent_memory.basics.errors import Forbidden, InvalidInput

ScopeKind = Literal["personal", "team"]
_PREFIX: dict[ScopeKind, str] = {"personal": "user", "team": "ws"}


@dataclass(frozen=True, slots=True)
class Scope:
    """One memory: a user's personal memory or a workspace's team memory."""

    kind: ScopeKind
    owner_id: str
    # The partition key of everything this scope holds. Ids cannot contain ``#``, so keys never collide. Set
    # once: every store reads it on every request.
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{_PREFIX[self.kind]}#{self.owner_id}")

    @classmethod
    def from_key(cls, key: str) -> Scope:
        prefix, _, owner = key.partition("#")
        kind = next(k for k, p in _PREFIX.items() if p == prefix)
        return cls(kind, owner)


class Conversation(Protocol):
    """What the binding reads of a conversation context (``edges.requests.chat.ConversationContext`` has it)."""

    @property
    def user_id(self) -> str: ...
    @property
    def visibility(self) -> Literal["private", "shared"]: ...
    @property
    def workspace_id(self) -> str | None: ...
    @property
    def thread_owner_id(self) -> str | None: ...


def bind_scope(context: Conversation) -> Scope:
    """The one place a scope is chosen: a private thread is its owner's, a shared one its workspace's."""
    if context.visibility == "private":
        if context.thread_owner_id is not None and context.thread_owner_id != context.user_id:
            raise Forbidden("personal memory is only written from the owner's own private threads")
        return Scope("personal", context.user_id)
    if context.workspace_id is None:
        raise InvalidInput(
            "a shared conversation needs `context.workspace_id`",
            details=[{"loc": ["context", "workspace_id"], "msg": "Field required", "type": "missing"}],
        )
    return Scope("team", context.workspace_id)
