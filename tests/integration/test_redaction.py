"""docs/api.md §6 "Redaction": every kind of secret, on every write path, is replaced before it is stored
or logged. Each test searches the whole table and every captured log line for the secret."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from tests.support.consolidation import consolidate
from tests.support.events import event_body
from tests.support.fakes import FakeChatModel
from tests.support.management import USER, local_auth, manage  # noqa: F401 - the fixture applies here
from tests.support.models import scripted_models
from tests.support.scopes import private, write_note
from tests.support.secrets_samples import SAMPLES

KINDS = sorted(SAMPLES)


@pytest.fixture(autouse=True)
def _redact_everything(monkeypatch):
    monkeypatch.setenv("MEMORY_REDACT_EXTRA", "email,phone")
    bootstrap.reset()


def table_dump(aws) -> str:
    return json.dumps(aws.scan(TableName="MemoryTable")["Items"])


def assert_nowhere(secret, aws, capsys, caplog):
    captured = capsys.readouterr()
    logs = captured.out + captured.err + caplog.text
    assert secret not in table_dump(aws)
    assert secret not in logs
    assert logs  # the paths do log: the search above searched something


@pytest.mark.parametrize("kind", KINDS)
def test_remember(call, aws, kind, capsys, caplog):
    text, secret = SAMPLES[kind]

    answer = call("remember", {"context": private(), "arguments": {"text": text}})

    assert answer.status == 201
    assert answer.body["redacted"] == [kind]
    assert f"[redacted: {kind}]" in answer.body["note"]["text"]
    assert_nowhere(secret, aws, capsys, caplog)


@pytest.mark.parametrize("kind", KINDS)
def test_update_memory(call, aws, kind, capsys, caplog):
    text, secret = SAMPLES[kind]

    answer = call("update_memory", {"context": private(), "arguments": {"content": f"# Notes\n{text}"}})

    assert answer.status == 200
    assert answer.body["warnings"] == [f"redacted: {kind}"]
    assert f"[redacted: {kind}]" in answer.body["document"]["content"]
    assert_nowhere(secret, aws, capsys, caplog)


@pytest.mark.parametrize("kind", KINDS)
def test_dashboard_edit(aws, kind, capsys, caplog):
    text, secret = SAMPLES[kind]

    answer = manage("personal_put_document", token=USER, body={"content": text, "expected_version": 0})

    assert answer.status == 200
    assert answer.body["warnings"] == [f"redacted: {kind}"]
    assert_nowhere(secret, aws, capsys, caplog)


@pytest.mark.parametrize("kind", KINDS)
def test_flush(call, aws, kind, monkeypatch, capsys, caplog):
    text, secret = SAMPLES[kind]
    scripted_models().flush = FakeChatModel(reply=lambda s, p: text)

    answer = call("flush", event_body("flush")).body

    assert answer["status"] == "written"
    assert f"[redacted: {kind}]" in answer["note"]["text"]
    assert_nowhere(secret, aws, capsys, caplog)


@pytest.mark.parametrize("kind", KINDS)
def test_consolidation_result(aws, kind, monkeypatch, capsys, caplog):
    """The model's document can hold a secret no note held (e.g. recalled from its own training): still redacted."""
    text, secret = SAMPLES[kind]
    scope = Scope("personal", "u-1")
    write_note(scope, datetime(2026, 11, 20, tzinfo=UTC), "an old note")
    model = FakeChatModel(reply=lambda s, p: f"# Memory\n- an old note\n- {text}")
    scripted_models().fold = model

    result = consolidate()

    assert result["groups_done"] == 1
    content = bootstrap.services().management.document(scope).document.content
    assert f"[redacted: {kind}]" in content
    assert_nowhere(secret, aws, capsys, caplog)


def test_a_secret_in_a_refused_write_is_not_logged_either(call, aws, capsys, caplog):
    text, secret = SAMPLES["api-token"]

    answer = call("remember", {"context": private(), "arguments": {"text": f"# {text}"}})  # a heading: 422

    assert answer.status == 422
    assert_nowhere(secret, aws, capsys, caplog)
