"""A scripted fake chat model for the offline demo: it plays a fixed conversation, but for real.

It is a fake of the *model* only: it asks for the same tool calls a real model would (through the same
``run_turn`` loop, in the OpenAI Chat Completions tool format), and its answers are built from what the
memory service really answered (the recalled notes, the memory block in the system prompt), so a broken
service shows in the transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from examples.models import Message, Reply

Results = list[dict[str, Any]]
Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class ScriptedTurn:
    """One user line and what the model does with it: ``calls`` (run together), then each round of ``then`` once
    the previous round's results are back, then ``answer(system, results of the last round)``."""

    user: str
    calls: list[Call] = field(default_factory=list)
    answer: Callable[[str, Results], str] = lambda system, results: "OK."
    then: list[list[Call]] = field(default_factory=list)

    def step(self, system: str, rounds: list[Results]) -> list[Call] | str:
        """The model's next move after ``rounds`` (the results of each round of calls so far in this turn): the
        next round of tool calls, or the answer."""
        planned = [self.calls, *self.then] if self.calls else []
        if len(rounds) < len(planned):
            return planned[len(rounds)]
        return self.answer(system, rounds[-1] if rounds else [])


def turn_for(script: list[ScriptedTurn], user: str) -> ScriptedTurn:
    """The turn of the script that answers the user's line ``user``."""
    for turn in script:
        if turn.user == user:
            return turn
    raise LookupError(f"the script has no turn for {user!r}")


def _memory_lines(system: str, *words: str) -> list[str]:
    """The memory block's lines that mention any of ``words`` (what the model 'read' in its system prompt)."""
    return [line.strip() for line in system.splitlines() if any(w.lower() in line.lower() for w in words)]


def _recalled(results: Results) -> str:
    notes = results[0].get("notes", []) if results else []
    return notes[0]["text"] if notes else "nothing"


DEMO_SCRIPT = [
    ScriptedTurn(
        "Hi! I'm Ana. I live in Lisbon and I always want metric units.",
        [("remember", {"text": "Ana lives in Lisbon and wants metric units"})],
        lambda system, results: f"Nice to meet you, Ana. Noted (note {results[0]['note']['id']}).",
    ),
    ScriptedTurn(
        "Please keep a profile of me: I'm a backend engineer, I work on billing.",
        [("update_memory", {"content": "# About Ana\n- Backend engineer, works on billing\n- Lives in Lisbon"})],
        lambda system, results: f"Profile saved (document version {results[0]['document']['version']}).",
    ),
    ScriptedTurn(
        "Where do I live again?",
        [("recall", {"query": "where does Ana live", "k": 3})],
        lambda system, results: f"From my notes: {_recalled(results)}.",
    ),
    ScriptedTurn(
        "Let's plan the billing migration: cutover the week of January 12, Dana signs off payments.",
        [],
        lambda system, results: "Planned: cutover week of January 12; open: Dana's payments sign-off.",
    ),
    ScriptedTurn(
        "What's a good distance for a weekend run, and what were we planning?",
        [],
        lambda system, results: (
            "Going by memory: " + " | ".join(_memory_lines(system, "metric", "migration") or ["(nothing in memory)"])
        ),
    ),
]
DEMO_SUMMARY = "Summary so far: Ana (Lisbon, metric units, billing engineer) planned the billing migration."


class ScriptedFakeModel:
    """Answers the turns of ``script`` in order; OpenAI Chat Completions' tool format, as most servers speak it."""

    tool_format = "openai-chat"

    def __init__(self, script: list[ScriptedTurn] = DEMO_SCRIPT) -> None:
        self.script = script

    def _turn(self, history: list[Message]) -> ScriptedTurn:
        users = [m["content"] for m in history if m["role"] == "user" and not m["content"].startswith("Summary")]
        return turn_for(self.script, users[-1] if users else "")

    def reply(self, system: str, history: list[Message], tools: list[dict[str, Any]]) -> Reply:
        offered = {tool["function"]["name"] for tool in tools}
        turn = self._turn(history)
        if history[-1]["role"] != "tool" and turn.calls:
            missing = [name for name, _ in turn.calls if name not in offered]
            if missing:
                raise LookupError(f"the script calls tools the agent did not offer: {missing}")
            return Reply("", [{"name": name, "arguments": dict(args)} for name, args in turn.calls])
        tail: Results = []
        for message in reversed(history):
            if message["role"] != "tool":
                break
            tail.insert(0, message["content"])
        return Reply(turn.answer(system, tail))

    @staticmethod
    def summarize(history: list[Message]) -> str:
        return DEMO_SUMMARY


def scripted_users(script: list[ScriptedTurn] = DEMO_SCRIPT, compact_before_last: bool = True) -> list[str]:
    """The user's lines: every turn of the script, with a ``/compact`` before the last one."""
    users = [turn.user for turn in script]
    return [*users[:-1], "/compact", users[-1]] if compact_before_last else users
