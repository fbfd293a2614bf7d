"""``make smoke``: check a deployed stack (or the local one) end to end, as the chat backend would use it.

    python -m local.smoke --api-url https://abc123.execute-api.eu-west-1.amazonaws.com --flush-function NAME
    python -m local.smoke --api-url http://127.0.0.1:3000 --lambda-url http://127.0.0.1:3001   # make run

With one throw-away user (``smoke-<time>-<random>``, never a real one) it checks the health route, writes a
note and reads it back, reads the user's context, flushes a short conversation, recalls the note, then erases
the user through the backend operations (``DELETE /v1/platform/users/{id}``) and checks that the export is
empty. In AWS every call is signed with the caller's credentials (the standard chain: ``AWS_PROFILE``, the
environment, an instance role), so the caller needs what the chat backend's role has (the tools, the context
and the flush) and the ``PlatformOperationsPolicy`` for the erase; against the local stack nothing is signed.

It prints one line a step and exits 1 when any step failed (2 on a usage error). Whatever failed, once a note
may have been written the erase still runs: a smoke test leaves nothing behind it can remove.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from agent_memory_client import ConversationContext, MemoryClient, MemoryClientError
from agent_memory_client.flush import is_loopback
from botocore.exceptions import BotoCoreError
from botocore.session import get_session

RECALL_WAIT_S = 30.0  # with a notes index the note is searchable once the indexer has read the stream
RECALL_POLL_S = 1.0


class StepFailed(Exception):
    """A step's check did not hold; its message is the report's detail."""


@dataclass(frozen=True)
class Step:
    name: str
    ok: bool
    detail: str
    ms: float


@dataclass
class Smoke:
    """One run against one client: the steps in order, each recorded as it ends."""

    memory: MemoryClient
    user_id: str
    recall_wait_s: float = RECALL_WAIT_S
    steps: list[Step] = field(default_factory=list)
    _note_id: str = ""
    _marker: str = ""

    @property
    def context(self) -> ConversationContext:
        return ConversationContext(user_id=self.user_id, thread_id="smoke-thread", visibility="private")

    def run(self) -> bool:
        """Every step; the erase whenever a write may have happened. True when all passed."""
        wrote = False
        try:
            if self._step("health", self._health):
                wrote = True  # from here on a note may exist even if remember's answer is lost
                if self._step("remember", self._remember):
                    self._step("context", self._context)
                    self._step("flush", self._flush)
                    self._step("recall", self._recall)
        finally:
            if wrote and self._step("erase", self._erase):
                self._step("erased", self._erased)
        return all(step.ok for step in self.steps)

    def _step(self, name: str, check: Callable[[], str]) -> bool:
        started = time.monotonic()
        try:
            detail, ok = check(), True
        except StepFailed as failure:
            detail, ok = str(failure), False
        except (MemoryClientError, BotoCoreError) as error:  # a refusal, no answer, or credentials that stop working
            detail, ok = f"{type(error).__name__}: {error}", False
        except (KeyError, TypeError, AttributeError) as error:  # an answer without the documented shape
            detail, ok = f"an answer not of the documented shape ({type(error).__name__}: {error})", False
        self.steps.append(Step(name, ok, detail, (time.monotonic() - started) * 1000))
        return ok

    def _health(self) -> str:
        answer = self.memory.health()
        if answer.get("status") != "ok":
            raise StepFailed(f"GET /v1/health answered {answer!r}")
        return "GET /v1/health: ok"

    def _remember(self) -> str:
        self._marker = f"smoke{secrets.token_hex(4)}"
        text = f"The smoke check {self._marker} prefers the teal colour scheme."
        note = self.memory.remember(self.context, text)["note"]
        self._note_id = note["id"]
        if note["text"] != text:
            raise StepFailed(f"note {note['id']} stored {note['text']!r}, not the text sent")
        return f"note {note['id']} written"

    def _context(self) -> str:
        answer = self.memory.get_context(self.context)
        if self._note_id not in {note["id"] for note in answer["recent_notes"]}:
            raise StepFailed(f"note {self._note_id} is not among the {len(answer['recent_notes'])} recent notes")
        if self._marker not in answer["system_prompt"]:
            raise StepFailed("the note's text is not in system_prompt")
        if answer["degraded"]:
            raise StepFailed(f"degraded: {', '.join(answer['degraded'])}")
        return f"the note is in recent_notes and system_prompt ({len(answer['system_prompt'])} chars)"

    def _flush(self) -> str:
        messages = [
            {"role": "user", "content": f"Let us plan the {self._marker} rollout for the smoke check."},
            {"role": "assistant", "content": "Sure. Who signs off the rollout?"},
            {"role": "user", "content": "Dana signs it off; what is left open?"},
        ]
        answer = self.memory.flush(self.context, f"smoke-{secrets.token_hex(4)}", messages, timeout_s=30)
        if answer["status"] == "written" and answer["note"] is not None:
            return f"written: note {answer['note']['id']}"
        if answer["status"] == "disabled":
            return "disabled (MemoryFlush=off): nothing written"
        raise StepFailed(f"{answer['status']}: {answer.get('reason', 'no reason given')}")

    def _recall(self) -> str:
        deadline = time.monotonic() + self.recall_wait_s
        while True:
            answer = self.memory.recall(self.context, f"{self._marker} teal colour scheme")
            ids = [note["id"] for note in answer["notes"]]
            if self._note_id in ids:
                return f"the note is result {ids.index(self._note_id) + 1} of {len(ids)} ({answer['mode']} mode)"
            if time.monotonic() >= deadline:
                raise StepFailed(f"the note is not among {len(ids)} results after {self.recall_wait_s:.0f} s")
            time.sleep(RECALL_POLL_S)

    def _erase(self) -> str:
        erased = self.memory.admin.erase(user=self.user_id)["erased"]
        if self._note_id and erased["notes"] < 1:
            raise StepFailed(f"the receipt counts {erased['notes']} notes erased")
        return f"{erased['notes']} notes, {erased['versions']} versions, {erased['other']} other records"

    def _erased(self) -> str:
        export = self.memory.admin.export(user=self.user_id)
        left = len(export["notes"]) + len(export["versions"])
        if left or export["document"]["content"]:
            raise StepFailed(f"the export still holds {left} notes or versions")
        return "the user's export holds no note, version or document"


def throwaway_user(now: datetime | None = None) -> str:
    """An id no real user has: the time and 48 random bits, within the service's id pattern."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"smoke-{stamp}-{secrets.token_hex(6)}"


def report(smoke: Smoke, target: str, out: TextIO) -> None:
    passed = sum(step.ok for step in smoke.steps)
    print(f"smoke check of {target}", file=out)
    print(f"throw-away user {smoke.user_id}", file=out)
    for step in smoke.steps:
        mark = "ok  " if step.ok else "FAIL"
        print(f"  {mark} {step.name:<9} {step.detail}  ({step.ms:.0f} ms)", file=out)
    verdict = "" if passed == len(smoke.steps) else ": FAILED"
    print(f"{passed} of {len(smoke.steps)} steps passed{verdict}", file=out)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m local.smoke", description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-url", required=True, help="the stack's ApiUrl output (or http://127.0.0.1:3000)")
    parser.add_argument("--flush-function", default="FlushFunction", help="the FlushFunctionName output")
    parser.add_argument("--lambda-url", help="another Lambda API for the flush (the local stack's :3001)")
    parser.add_argument("--region", help="the stack's region (else the API's host name's, else the profile's)")
    parser.add_argument("--recall-wait", type=float, default=RECALL_WAIT_S, help="seconds to wait for the index")
    return parser


def _target(args: argparse.Namespace) -> str:
    signing = "unsigned" if is_loopback(args.api_url) else "SigV4 with the caller's credentials"
    flush = f"{args.flush_function} at {args.lambda_url}" if args.lambda_url else args.flush_function
    return f"{args.api_url} ({signing}), flush {flush}"


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    args = _parser().parse_args(argv)
    signing = "none" if is_loopback(args.api_url) else "sigv4"  # a custom domain name in front of the API too
    options: dict[str, Any] = {"flush_function": args.flush_function, "lambda_endpoint": args.lambda_url}
    options["signing"] = signing
    if args.region:
        options["region"] = args.region
    if signing == "sigv4":
        options["credentials"] = get_session().get_credentials()
        if options["credentials"] is None:
            print("make smoke: no AWS credentials (AWS_PROFILE, the environment or an instance role)", file=sys.stderr)
            return 2
    try:
        memory = MemoryClient(args.api_url, **options)
    except ValueError as error:  # no region for SigV4: one line, not a traceback
        print(f"make smoke: {error}", file=sys.stderr)
        return 2
    with memory:
        smoke = Smoke(memory, throwaway_user(), recall_wait_s=args.recall_wait)
        ok = smoke.run()
    report(smoke, _target(args), out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
