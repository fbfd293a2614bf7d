"""Redaction that one invisible character cannot undo (docs/security.md "Redaction"): notes are checked once
clean (what is stored is what was checked), documents through a view without invisible characters, and
every text a model returns (the flush, a consolidation, a compression) is checked again, with warnings."""

from __future__ import annotations

import json
import time
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

KEY = "AKIAIOSFODNN7EXAMPLE"
CARD = "4111 1111 1111 1111"
# Each secret with an invisible or separator character where cleaning would take it out or make it a space.
SPLIT = [
    ("AKIA\u200bIOSFODNN7EXAMPLE", KEY, "aws-access-key"),
    ("AKIAIOSF\u202eODNN7EXAMPLE", KEY, "aws-access-key"),
    ("AKIAIOSFODNN\u2066\u20697EXAMPLE", KEY, "aws-access-key"),
    ("4111\u20281111 1111 1111", CARD, "card-number"),
    ("4111\u00a01111\u20291111\u00851111", CARD, "card-number"),
    ("ghp_A1b2C3d4E5f6G7h8\ufeffI9j0K1l2M3n4O5p6Q7r8", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "api-token"),
]


def stored(aws) -> str:
    """Everything the table holds, with invisible characters taken out as a reader's copy would."""
    dump = json.dumps(aws.scan(TableName="MemoryTable")["Items"], ensure_ascii=False)
    return "".join(ch for ch in dump if ch not in "\u200b\u202e\u2066\u2069\ufeff")


@pytest.mark.parametrize(("text", "secret", "kind"), SPLIT)
def test_remember_checks_the_text_it_stores(call, aws, text, secret, kind):
    answer = call("remember", {"context": private(), "arguments": {"text": f"the key is {text} ok"}})

    assert answer.status == 201
    assert answer.body["redacted"] == [kind]
    assert answer.body["note"]["text"] == f"the key is [redacted: {kind}] ok"
    assert secret not in stored(aws) and secret.replace(" ", "") not in stored(aws).replace(" ", "")


@pytest.mark.parametrize(("text", "secret", "kind"), SPLIT)
def test_a_document_is_checked_through_its_invisible_characters(call, aws, text, secret, kind):
    answer = call("update_memory", {"context": private(), "arguments": {"content": f"# Keys\n- {text}\n- more"}})

    assert answer.status == 200
    assert answer.body["warnings"] == [f"redacted: {kind}"]
    assert answer.body["document"]["content"] == f"# Keys\n- [redacted: {kind}]\n- more"
    assert secret not in stored(aws)


@pytest.mark.parametrize(("text", "secret", "kind"), SPLIT[:2])
def test_a_dashboard_edit_too(aws, text, secret, kind):
    answer = manage("personal_put_document", token=USER, body={"content": text, "expected_version": 0})

    assert answer.status == 200
    assert answer.body["warnings"] == [f"redacted: {kind}"]
    assert secret not in stored(aws)


@pytest.mark.parametrize(("text", "secret", "kind"), SPLIT)
def test_the_flush_checks_the_models_note_once_clean(call, aws, monkeypatch, text, secret, kind):
    model = FakeChatModel(reply=lambda s, p: f"Working on the deploy; the key {text} is in use.")
    scripted_models().flush = model

    answer = call("flush", event_body("flush")).body

    assert answer["status"] == "written"
    assert f"[redacted: {kind}]" in answer["note"]["text"]
    assert secret not in stored(aws)


def test_a_consolidation_result_is_checked_through_invisible_characters(aws, monkeypatch):
    scope = Scope("personal", "u-1")
    write_note(scope, datetime(2026, 11, 20, tzinfo=UTC), "an old note")
    model = FakeChatModel(reply=lambda s, p: "# Memory\n- an old note\n- key AKIA\u200bIOSFODNN7EXAMPLE")
    scripted_models().fold = model

    assert consolidate()["groups_done"] == 1

    assert bootstrap.services().management.document(scope).document.content.endswith("- key [redacted: aws-access-key]")
    assert KEY not in stored(aws)


@pytest.fixture
def model(monkeypatch):
    fake = FakeChatModel()
    scripted_models().compression = fake
    return fake


def test_a_secret_the_compression_adds_is_redacted_with_its_warning(call, aws, model):
    model.reply = lambda system, prompt: "# Memory\n" + "fact. " * 2000 + "\nkey AKIA\u200bIOSFODNN7EXAMPLE"

    answer = call("update_memory", {"context": private(), "arguments": {"content": "fact. " * 5000}})

    assert answer.status == 200
    assert answer.body["compressed"] is True
    assert answer.body["document"]["content"].endswith("key [redacted: aws-access-key]")
    assert "redacted: aws-access-key" in answer.body["warnings"]
    assert KEY not in stored(aws)


def test_the_warnings_of_the_write_and_of_its_compression_are_listed_once_each(call, aws, model):
    model.reply = lambda system, prompt: "# Memory\n" + "fact. " * 2000 + f"\n{KEY} and {CARD}"

    content = f"{KEY}\n" + "fact. " * 5000
    answer = call("update_memory", {"context": private(), "arguments": {"content": content}})

    assert answer.status == 200
    redactions = [warning for warning in answer.body["warnings"] if warning.startswith("redacted")]
    assert redactions == ["redacted: aws-access-key", "redacted: card-number"]


@pytest.mark.parametrize("size", [125_001, 2_100_006])
def test_what_no_compression_could_save_is_refused_before_the_model_is_asked(call, aws, model, size):
    model.reply = lambda system, prompt: "# Memory\n" + "fact. " * 3000

    answer = call(
        "update_memory", {"context": private(), "arguments": {"content": "fact. " * (size // 6) + "x" * (size % 6)}}
    )

    assert answer.status == 422
    assert answer.body["error"]["code"] == "document_too_large"
    assert "125,000" in answer.body["error"]["message"]
    assert model.calls == []
    assert aws.scan(TableName="MemoryTable")["Items"] == []


def test_the_dashboard_put_is_refused_the_same_way(aws, model):
    answer = manage("personal_put_document", token=USER, body={"content": "x" * 2_100_006, "expected_version": 0})

    assert answer.status == 422
    assert answer.body["error"]["code"] == "document_too_large"
    assert model.calls == []


def test_the_largest_compressible_document_is_still_sent_to_the_model(call, model):
    model.reply = lambda system, prompt: "# Memory\n" + "x" * 24_991  # 25,000: a fifth of 125,000, and fits

    answer = call("update_memory", {"context": private(), "arguments": {"content": "fact. " * 20_833 + "xx"}})

    assert answer.status == 200
    assert len(model.calls) == 1


def test_a_long_adversarial_note_is_cut_before_any_detector_and_answers_at_once(call, aws):
    started = time.perf_counter()
    answer = call("remember", {"context": private(), "arguments": {"text": "a-" * 125_000 + "://"}})

    assert answer.status == 201
    assert answer.body["truncated"] is True
    assert time.perf_counter() - started < 3.0  # the old pattern took 24 s on 200 KB of this


def test_a_long_adversarial_document_is_refused_at_once(call, aws):
    started = time.perf_counter()
    answer = call("update_memory", {"context": private(), "arguments": {"content": "a-" * 125_000}})

    assert answer.status == 422
    assert time.perf_counter() - started < 3.0
