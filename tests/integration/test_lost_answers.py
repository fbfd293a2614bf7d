"""Exactly once through lost answers: DynamoDB commits a write, its answer is lost, and the write is sent again
(by botocore, or by the service's own contention retry). It is applied once, and answered as the first
attempt would have been: one version per acknowledged document write, no 409 for a write that is in, the
counters counting it once.

Each case runs twice: with an engine that honours a transaction's ``ClientRequestToken`` (DynamoDB, the
tests' moto) and with one that does not (the retry sent without it): there the write ids alone must hold.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.domain.scope import Scope
from local.token import mint
from tests.conftest import private
from tests.integration.test_faults import document_items, lost_answers, notes  # noqa: F401 - a fixture
from tests.integration.test_management import manage

PERSONAL = Scope("personal", "u-1")
TOKEN = mint("u-1", ["w-3"])
ENGINES = pytest.mark.parametrize("tokens", [True, False], ids=["tokens-honoured", "tokens-ignored"])


@pytest.fixture(autouse=True)
def _dashboard_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", "local-dev-secret")


def versions(aws: Any, scope: Scope = PERSONAL) -> list[tuple[int, str]]:
    return [
        (int(item["version"]["N"]), item["content"]["S"])
        for item in document_items(aws, scope)
        if item["sk"]["S"].startswith("doc#v#")
    ]


def _update(call: Any, content: str, **context: Any) -> Any:
    return call("update_memory", {"context": private(**context), "arguments": {"content": content}})


@ENGINES
@pytest.mark.parametrize("versioned", [False, True], ids=["unversioned", "versioned"])
def test_an_update_memory_whose_answer_was_lost_saves_one_version(call, aws, lost_answers, tokens, versioned):
    assert _update(call, "# Memory\n- one").status == 200
    clients = lost_answers("transact_write_items", tokens=tokens)

    answer = _update(call, "# Memory\n- two", **({"document_version": 1} if versioned else {}))

    assert answer.status == 200, answer.body
    assert answer.body["document"]["version"] == 2
    assert versions(aws) == [(1, "# Memory\n- one"), (2, "# Memory\n- two")]
    assert sum(client.lost for client in clients) == 1


@ENGINES
def test_a_dashboard_put_whose_answer_was_lost_is_not_refused_and_saves_one_version(call, aws, lost_answers, tokens):
    assert _update(call, "# Memory\n- one").status == 200
    lost_answers("transact_write_items", tokens=tokens)

    answer = manage(
        "personal_put_document",
        path="/v1/memory/personal/document",
        body={"content": "# Memory\n- edited", "expected_version": 1},
        token=TOKEN,
    )

    assert answer.status == 200, answer.body  # not 409: the edit is in
    assert versions(aws) == [(1, "# Memory\n- one"), (2, "# Memory\n- edited")]


@ENGINES
def test_a_restore_whose_answer_was_lost_saves_one_version(call, aws, lost_answers, tokens):
    _update(call, "# Memory\n- one")
    _update(call, "# Memory\n- two")
    lost_answers("transact_write_items", tokens=tokens)

    answer = manage(
        "personal_restore",
        path="/v1/memory/personal/document/versions/1/restore",
        body={"expected_version": 2},
        token=TOKEN,
    )

    assert answer.status == 200, answer.body
    assert versions(aws) == [(1, "# Memory\n- one"), (2, "# Memory\n- two"), (3, "# Memory\n- one")]


def test_a_document_write_whose_retries_were_spent_is_present_at_most_once(call, aws, lost_answers):
    _update(call, "# Memory\n- one")
    lost_answers("transact_write_items", then_raise="InternalServerError")

    answer = _update(call, "# Memory\n- two")

    assert answer.status == 503
    assert versions(aws) == [(1, "# Memory\n- one"), (2, "# Memory\n- two")]  # in, once: the outcome was unknown


def _notes_today() -> int:
    answer = manage("personal_usage", path="/v1/memory/personal/usage", token=TOKEN)
    assert answer.status == 200, answer.body
    return int(answer.body["notes_today"])


@ENGINES
@pytest.mark.parametrize(
    "lost",
    [("update_item",), ("transact_write_items",), ("update_item", "transact_write_items")],
    ids=["position", "note", "both"],
)
def test_remembers_whose_answers_were_lost_are_numbered_and_counted_once(call, aws, lost_answers, tokens, lost):
    clients = lost_answers(*lost, tokens=tokens)

    answers = [call("remember", {"context": private(), "arguments": {"text": f"fact {n}"}}) for n in range(5)]

    assert [answer.status for answer in answers] == [201] * 5
    assert [answer.body["note"]["position"] for answer in answers] == [1, 2, 3, 4, 5]  # no gap, no repeat
    assert notes(aws, PERSONAL) == [f"fact {n}" for n in range(5)]
    assert sum(client.lost for client in clients) >= 5
    assert _notes_today() == 5  # the counter equals the notes the table holds
