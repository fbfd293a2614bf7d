"""Named fakes for what cannot run on this machine: the chat model."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_memory.basics.errors import ModelUnavailable
from agent_memory.providers.chat import Answer, Tool


def fake_tokens(text: str) -> int:
    """The fake's token count: about four characters a token, as the providers' tokenizers give for English."""
    return (len(text) + 3) // 4


@dataclass
class FakeChatModel:
    """Answers with ``reply(system, prompt)``; can be slow or fail. Records every call.

    A reply that is a dict is a call of the offered tool with those arguments (``ask`` only); a string is text.
    ``tools`` records the tool offered with each call (None for text only). Tokens are reported as ``fake_tokens``
    of the prompt and of the answer. ``abandon()`` ends a slow call that the service has stopped waiting for, with
    an error, so that it reports nothing into a later test."""

    reply: Callable[[str, str], str | dict[str, Any]] = lambda system, prompt: "ok"
    delay_s: float = 0.0
    fail_with: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)
    tools: list[Tool | None] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _abandoned: threading.Event = field(default_factory=threading.Event)

    def abandon(self) -> None:
        self.fail_with = "abandoned by the test"
        self._abandoned.set()

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> str:
        answer = self.ask(system=system, prompt=prompt, max_tokens=max_tokens)
        return answer.text

    def ask(self, *, system: str, prompt: str, max_tokens: int, tool: Tool | None = None) -> Answer:
        with self._lock:
            self.calls.append((system, prompt))
            self.tools.append(tool)
        if self.delay_s:
            self._abandoned.wait(self.delay_s)
        if self.fail_with:
            raise ModelUnavailable(self.fail_with)
        reply = self.reply(system, prompt)
        if isinstance(reply, dict):
            if tool is None:
                raise ModelUnavailable("the fake was asked for text and scripted with a tool call")
            return Answer("", reply, fake_tokens(system + prompt), fake_tokens(json.dumps(reply)))
        return Answer(reply, None, fake_tokens(system + prompt), fake_tokens(reply))
