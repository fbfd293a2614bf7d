"""Named fakes for what cannot run on this machine: the chat model."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from agent_memory.basics.errors import ModelUnavailable


@dataclass
class FakeChatModel:
    """Answers with ``reply(system, prompt)``; can be slow or fail. Records every call."""

    reply: Callable[[str, str], str] = lambda system, prompt: "ok"
    delay_s: float = 0.0
    fail_with: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str:
        with self._lock:
            self.calls.append((system, prompt))
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.fail_with:
            raise ModelUnavailable(self.fail_with)
        return self.reply(system, prompt)
