"""Isolation, tried hard: random sequences of every operation over three users and three workspaces.

The invariant (issue 7): no operation in scope A reads or changes anything in scope B.
- On the table: before and after each operation, every partition other than the one the operation
  targets is read (the whole table in one Scan, split by partition key) and must be unchanged; a refused
  operation (403/422) changes no partition at all. Partition keys that a key-building bug could produce
  (``user#w-1``, ``ws#u-1``) are probed too and must stay empty.
- On the contents: each scope writes texts carrying its own marker word, so a leak is visible; no
  partition ever holds another scope's marker.
- On every answer: no other scope's marker appears, and every note an answer holds (id and text) is one
  of the target scope's own notes.

Operations: remember, update_memory, recall, context, flush (fake model), the dashboard's reads, writes,
deletes, restore and search (local tokens for users with some memberships), and consolidation runs
(fake model) over notes written in the past with ``write_note``.

``make test`` runs the ``ci`` profile (200 examples); ``make fuzz`` the ``fuzz`` profile.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from local.lambda_context import LambdaContext
from local.template import load_handler, table_definitions
from local.token import mint
from tests.support.calls import NOW, Answer, Call
from tests.support.consolidation import merge, night_context
from tests.support.events import event_body, load_event
from tests.support.fakes import FakeChatModel
from tests.support.management import manage
from tests.support.models import scripted_models
from tests.support.scopes import private, shared, write_note

USERS = ("u-1", "u-2", "u-3")
WORKSPACES = ("w-1", "w-2", "w-3")
MEMBERSHIPS = {"u-1": ["w-1", "w-2"], "u-2": ["w-2", "w-3"], "u-3": []}
SCOPES = tuple(Scope("personal", u) for u in USERS) + tuple(Scope("team", w) for w in WORKSPACES)
# Each scope's marker word: what a leak would carry. No marker is a substring of another.
MARK = {s.key: f"zz{s.owner_id.replace('-', '')}{s.kind[0]}q" for s in SCOPES}
WORDS = ("apple", "billing", "cutover", "dana")  # shared by every scope, so queries match everywhere
# Every scope's partition and the operators' one, read around each operation.
PROBED = (*(s.key for s in SCOPES), "consolidation")
# The keys a confused prefix would produce: never written, so read once at the end of each example.
CONFUSED = (*(f"ws#{u}" for u in USERS), *(f"user#{w}" for w in WORKSPACES))
NOW_DT = datetime.fromisoformat(NOW.replace("Z", "+00:00"))
TABLE = "MemoryTable"
MARKER = re.compile(r"zz[a-z0-9]+q")


# --- operations -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Conversation:
    """A conversation context as the backend sends it; ``target`` is the scope it must be bound to."""

    visibility: str
    user: str
    workspace: str | None = None
    owner: str | None = None

    def body(self) -> dict[str, Any]:
        if self.visibility == "shared":
            return shared(self.workspace or "", user=self.user)
        return private(self.user, **({"thread_owner_id": self.owner} if self.owner else {}))

    @property
    def target(self) -> Scope | None:
        if self.visibility == "shared":
            return Scope("team", self.workspace or "")
        if self.owner not in (None, self.user):
            return None  # 403: nothing read or written
        return Scope("personal", self.user)


conversations = st.one_of(
    st.builds(
        Conversation,
        st.just("private"),
        st.sampled_from(USERS),
        st.none(),
        st.one_of(st.none(), st.sampled_from(USERS)),
    ),
    st.builds(Conversation, st.just("shared"), st.sampled_from(USERS), st.sampled_from(WORKSPACES)),
)
words = st.sampled_from(WORDS)
MANAGE_ACTIONS = ("document", "put", "versions", "version", "restore", "notes", "search", "delete", "runs")
STAGES = ("$default", "prod")  # on a named stage the raw path carries the stage: authorization must not care

operations = st.one_of(
    st.tuples(st.just("remember"), conversations, words),
    st.tuples(st.just("update_memory"), conversations, words),
    st.tuples(st.just("recall"), conversations, words),
    st.tuples(st.just("context"), conversations),
    st.tuples(st.just("flush"), conversations, st.sampled_from(("c-1", "c-2")), words),
    st.tuples(
        st.just("manage"),
        st.sampled_from(USERS),
        st.sampled_from(("personal", *WORKSPACES)),
        st.sampled_from(MANAGE_ACTIONS),
        words,
        st.sampled_from(STAGES),
    ),
    st.tuples(st.just("old_note"), st.sampled_from(SCOPES), words, st.integers(8, 20)),
    st.tuples(st.just("consolidate")),
)


# --- the table --------------------------------------------------------------------------------------------


def partitions(aws: Any) -> dict[str, list[dict[str, Any]]]:
    """Every partition the table holds, each in its sort key's order (as a Query returns it): one Scan, where a
    Query per partition made each operation's reads seven requests, most of the property's time."""
    found: dict[str, list[dict[str, Any]]] = {}
    kwargs: dict[str, Any] = {"TableName": TABLE, "ConsistentRead": True}
    while True:
        page = aws.scan(**kwargs)
        for item in page["Items"]:
            # What a context call showed is recorded in the read scope's own partition, behind the turn (its
            # timing is its writer thread's): the record of a read is not a change the property is about.
            if not item["sk"]["S"].startswith("inj#"):
                found.setdefault(item["pk"]["S"], []).append(item)
        if "LastEvaluatedKey" not in page:
            return {pk: sorted(items, key=lambda item: item["sk"]["S"]) for pk, items in found.items()}
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def snapshot(aws: Any) -> dict[str, list[dict[str, Any]]]:
    held = partitions(aws)
    return {pk: held.get(pk, []) for pk in PROBED}


def notes_in(items: list[dict[str, Any]]) -> dict[str, str]:
    """``{note id: text}`` of a partition's notes."""
    return {
        f"{item['day']['S']}.{int(item['position']['N'])}": item["text"]["S"]
        for item in items
        if item["sk"]["S"].startswith("note#")
    }


def current_version(items: list[dict[str, Any]]) -> int:
    head = [item for item in items if item["sk"]["S"] == "doc"]
    return int(head[0]["version"]["N"]) if head else 0


def reset_table(aws: Any) -> None:
    """Empty tables for each example: dropping and recreating them in moto is cheaper than deleting items."""
    for name, definition in table_definitions().items():
        aws.delete_table(TableName=definition["TableName"])
        aws.create_table(**table_definitions()[name])


# --- answers ----------------------------------------------------------------------------------------------


def walk_notes(value: Any) -> list[dict[str, Any]]:
    """Every note (a dict with ``id`` and ``text``) anywhere in an answer."""
    if isinstance(value, dict):
        found = [value] if {"id", "text"} <= value.keys() else []
        return found + [note for item in value.values() for note in walk_notes(item)]
    if isinstance(value, list):
        return [note for item in value for note in walk_notes(item)]
    return []


def assert_answer_isolated(answer: Any, target: Scope | None, target_notes: dict[str, str]) -> None:
    text = json.dumps(answer)
    allowed = {MARK[target.key]} if target else set()
    leaked = set(MARKER.findall(text)) - allowed
    assert not leaked, f"answer for {target} holds markers of other scopes: {leaked}: {text[:500]}"
    for note in walk_notes(answer):
        assert target is not None, f"a refused operation answered with a note: {note}"
        assert target_notes.get(note["id"]) == note["text"], f"{note} is not a note of {target.key}"


def assert_table_isolated(
    before: dict[str, list[dict[str, Any]]], after: dict[str, list[dict[str, Any]]], changed: set[str]
) -> None:
    for pk in PROBED:
        if pk not in changed:
            assert after[pk] == before[pk], f"partition {pk} changed by an operation on {changed or 'nothing'}"
    for scope in SCOPES:
        leaked = set(MARKER.findall(json.dumps(after[scope.key]))) - {MARK[scope.key]}
        assert not leaked, f"partition {scope.key} holds markers of other scopes: {leaked}"


def manage_on(event_name: str, stage: str, path: str, token: str, **kwargs: Any) -> Any:
    """``manage`` (test_management) on an API Gateway stage: a named one prefixes the raw path."""
    if stage == "$default":
        return manage(event_name, path=path, token=token, **kwargs)
    event = load_event(f"management/{event_name}")
    event["requestContext"]["stage"] = stage
    event["rawPath"] = event["requestContext"]["http"]["path"] = f"/{stage}{path}"
    query = kwargs.get("query")
    if query is not None:
        event["rawQueryString"] = urlencode(query)
        event["queryStringParameters"] = {k: str(v) for k, v in query.items()} or None
    if "body" in kwargs:
        event["body"] = json.dumps(kwargs["body"])
    event["headers"]["authorization"] = f"Bearer {token}"
    del event["requestContext"]["authorizer"]
    result = load_handler("ManagementFunction")(event, LambdaContext())
    return Answer(result["statusCode"], json.loads(result["body"]) if result.get("body") else None, {})


# --- the driver -------------------------------------------------------------------------------------------


class Driver:
    def __init__(self, call: Call, aws: Any) -> None:
        self.call = call
        self.aws = aws
        self.runs = itertools.count(1)
        self.tokens = {user: mint(user, MEMBERSHIPS[user]) for user in USERS}
        self.state: dict[str, list[dict[str, Any]]] = {}

    def start(self) -> None:
        reset_table(self.aws)
        self.state = snapshot(self.aws)

    def finish(self) -> None:
        held = partitions(self.aws)
        for pk in CONFUSED:
            assert held.get(pk, []) == [], f"an item was written under the confused key {pk}"

    def run(self, operation: tuple[Any, ...]) -> None:
        before = self.state
        answer, status, target, changes_all = self.perform(operation, before)
        after = self.state = snapshot(self.aws)
        assert status < 500, f"{operation} answered {status}: {answer}"
        if target is None and status != 200:
            assert status in (403, 404, 422), f"{operation} was refused with {status}"
        reads = after[target.key] if target else []
        notes = {**notes_in(before[target.key]), **notes_in(reads)} if target else {}
        assert_answer_isolated(answer, target, notes)
        changed = set(PROBED) if changes_all else ({target.key} if target else set())
        assert_table_isolated(before, after, changed)

    def perform(self, operation: tuple[Any, ...], before: dict[str, Any]) -> tuple[Any, int, Scope | None, bool]:
        kind, *args = operation
        if kind in ("remember", "update_memory", "recall", "context", "flush"):
            conversation: Conversation = args[0]
            target = conversation.target
            mark = MARK[target.key] if target else "plain"
            if kind == "context":
                answer = self.call("context", {"context": conversation.body()})
            elif kind == "flush":
                compaction_id, word = args[1], args[2]
                body = event_body("flush") | {
                    "context": conversation.body(),
                    "compaction_id": compaction_id,
                    "messages": [{"role": "user", "content": f"{mark} {word} is the topic"}],
                }
                answer = self.call("flush", body)
                return answer.body, 200, target, False
            else:
                argument = {"remember": "text", "update_memory": "content", "recall": "query"}[kind]
                value = args[1] if kind == "recall" else f"{mark} {args[1]}"
                answer = self.call(kind, {"context": conversation.body(), "arguments": {argument: value}})
            return answer.body, answer.status, target, False
        if kind == "manage":
            return self.manage(*args, before=before)
        if kind == "old_note":
            scope, word, days = args
            write_note(scope, NOW_DT - timedelta(days=days), f"{MARK[scope.key]} {word} from the past")
            return None, 200, scope, False
        event = event_body("scheduled") | {"time": NOW, "id": f"run-{next(self.runs)}"}
        result = load_handler("ConsolidateFunction")(event, night_context())
        return result, 200, None, True

    def manage(self, user: str, where: str, action: str, word: str, stage: str, *, before: dict[str, Any]) -> Any:
        if action == "runs":  # an operators' route: no user here is one
            answer = manage_on("list_runs", stage, "/v1/admin/consolidation/runs", self.tokens[user])
            assert answer.status == 403, f"{user} listed the runs: {answer}"
            return answer.body, answer.status, None, False
        team = where != "personal"
        scope = Scope("team", where) if team else Scope("personal", user)
        allowed = not team or where in MEMBERSHIPS[user]
        base = f"/v1/memory/workspaces/{where}" if team else "/v1/memory/personal"
        prefix = "team" if team else "personal"
        items = before[scope.key]
        kwargs: dict[str, Any] = {}
        event, path = {
            "document": ("document", "/document"),
            "put": ("put_document", "/document"),
            "versions": ("versions", "/document/versions"),
            "version": ("version", "/document/versions/1"),
            "restore": ("restore", "/document/versions/1/restore"),
            "notes": ("notes", "/notes"),
            "search": ("search", "/notes/search"),
            "delete": ("delete_note", "/notes/"),
        }[action]
        if action == "put":
            kwargs["body"] = {"content": f"{MARK[scope.key]} {word}", "expected_version": current_version(items)}
        elif action == "restore":
            kwargs["body"] = {"expected_version": current_version(items)}
        elif action in ("notes", "versions"):
            kwargs["query"] = {}
        elif action == "search":
            kwargs["query"] = {"q": word}
        elif action == "delete":
            ids = sorted(notes_in(items)) or ["2026-12-03.1"]  # an id that other scopes may well hold
            path += ids[0]
        answer = manage_on(f"{prefix}_{event}", stage, base + path, self.tokens[user], **kwargs)
        if not allowed:
            assert answer.status == 403, f"{user} reached {base}: {answer}"
        return answer.body, answer.status, scope if allowed else None, False


@pytest.fixture
def driver(call: Call, aws: Any, monkeypatch: pytest.MonkeyPatch) -> Driver:
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", "local-dev-secret")
    monkeypatch.setenv("MEMORY_RECALL_NEIGHBOURS", "3")  # recall at its widest: a hit's conversation joins it
    bootstrap.reset()

    def summary(system: str, prompt: str) -> str:
        found = re.search(r"(zz[a-z0-9]+q|plain) \w+", prompt)
        return f"{found.group(0) if found else 'nothing'} and open threads"

    scripted_models().flush = FakeChatModel(reply=summary)
    scripted_models().fold = FakeChatModel(reply=merge)
    return Driver(call, aws)


@pytest.mark.long
@given(sequence=st.lists(operations, min_size=1, max_size=10))
def test_no_operation_in_one_scope_reads_or_changes_another(driver: Driver, sequence: list[tuple[Any, ...]]) -> None:
    driver.start()  # one moto mock for the whole test; empty tables for each example
    for operation in sequence:
        driver.run(operation)
    driver.finish()
