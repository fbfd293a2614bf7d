"""Fault injection on every write path: DynamoDB throttles or fails; the answer is clear, nothing is half-written,
nothing already stored is lost. And every AWS client the service builds retries in botocore's standard mode,
with bounded attempts and timeouts.

Faults are injected where botocore has given up (its retries exhausted): a wrapper around the real moto
client raises ``ClientError`` for the chosen operations. Already covered elsewhere: a throttled recall
(test_recall), a context whose notes fail (test_context), a flush whose storage or model fails
(test_flush), a failing model for compression (test_update_memory) and consolidation (test_consolidation).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.basics.settings import get_settings
from agent_memory.bootstrap import CONSOLIDATION_READ_TIMEOUT_S
from agent_memory.domain.scope import Scope
from agent_memory.storage.client import make_dynamodb_client
from local.token import mint
from tests.support.consolidation import consolidate, folded_counts, merge, notes_of
from tests.support.events import event_body
from tests.support.fakes import FakeChatModel
from tests.support.faults import FaultyClient, document_items, items, notes
from tests.support.management import manage
from tests.support.models import scripted_models
from tests.support.scopes import private, write_note

PERSONAL = Scope("personal", "u-1")
TEAM = Scope("team", "w-3")
UNAVAILABLE = ["ThrottlingException", "ProvisionedThroughputExceededException", "InternalServerError"]


@pytest.fixture
def faults(aws, monkeypatch) -> Callable[..., list[FaultyClient]]:
    """``faults(put_item="ThrottlingException")``: every DynamoDB client built from now on fails so."""
    made: list[FaultyClient] = []
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", "local-dev-secret")

    def _inject(after: int = 0, **failing: str) -> list[FaultyClient]:
        real = make_dynamodb_client

        def _faulty(settings, **kwargs):
            client = FaultyClient(real(settings, **kwargs), failing, after)
            made.append(client)
            return client

        bootstrap.provide(make_dynamodb_client=_faulty)
        bootstrap.reset()
        return made

    return _inject


def heal(monkeypatch) -> None:
    """The storage is back: clients built from now on are the real ones."""
    bootstrap.provide(make_dynamodb_client=make_dynamodb_client)
    bootstrap.reset()


def assert_503(answer) -> None:
    assert answer.status == 503
    assert answer.body["error"]["code"] == "storage_unavailable"
    assert "Traceback" not in str(answer.body)


# --- remember ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", UNAVAILABLE)
@pytest.mark.parametrize("operation", ["update_item", "transact_write_items"])  # the day counter, then the note
def test_remember_on_failing_storage_is_503_writes_no_note_and_keeps_the_others(
    call, aws, faults, monkeypatch, operation, code
):
    call("remember", {"context": private(), "arguments": {"text": "kept before the outage"}})
    faults(**{operation: code})

    answer = call("remember", {"context": private(), "arguments": {"text": "written during the outage"}})

    assert_503(answer)
    assert notes(aws, PERSONAL) == ["kept before the outage"]
    heal(monkeypatch)
    retried = call("remember", {"context": private(), "arguments": {"text": "written during the outage"}})
    assert retried.status == 201
    assert notes(aws, PERSONAL) == ["kept before the outage", "written during the outage"]


def test_a_note_put_retried_after_its_answer_was_lost_is_written_once(call, aws, lost_answers):
    lost_answers("transact_write_items")

    answer = call("remember", {"context": private(), "arguments": {"text": "written once"}})

    assert answer.status == 201
    assert notes(aws, PERSONAL) == ["written once"]  # not a second copy at the next position
    assert answer.body["note"]["position"] == 1


@pytest.mark.parametrize("then_raise", [None, "InternalServerError"], ids=["retried", "retries-spent"])
def test_a_flush_whose_transaction_answer_was_lost_is_written_once_and_says_so(
    call, aws, lost_answers, monkeypatch, then_raise
):
    lost_answers("transact_write_items", then_raise=then_raise)
    scripted_models().flush = FakeChatModel(reply=lambda s, p: "Summary.")
    body = event_body("flush")
    body["context"] = private()

    answer = call("flush", body)

    assert answer.body["status"] == "written", answer.body
    assert notes(aws, PERSONAL) == ["Summary."]


def test_an_unexpected_storage_error_is_a_500_in_the_error_shape_and_writes_nothing(call, aws, faults):
    faults(transact_write_items="ValidationException")

    answer = call("remember", {"context": private(), "arguments": {"text": "never half-written"}})

    assert answer.status == 500
    assert answer.body["error"]["code"] == "internal_error"
    assert notes(aws, PERSONAL) == []


# --- update_memory ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", UNAVAILABLE)
def test_update_memory_on_failing_storage_is_503_and_the_document_and_history_are_unchanged(
    call, aws, faults, monkeypatch, code
):
    call("update_memory", {"context": private(), "arguments": {"content": "# Memory\n- version one"}})
    before = document_items(aws, PERSONAL)
    faults(transact_write_items=code)

    answer = call("update_memory", {"context": private(), "arguments": {"content": "# Memory\n- version two"}})

    assert_503(answer)
    assert document_items(aws, PERSONAL) == before
    heal(monkeypatch)
    again = call("update_memory", {"context": private(), "arguments": {"content": "# Memory\n- version two"}})
    assert again.status == 200 and again.body["document"]["version"] == 2


# --- management -------------------------------------------------------------------------------------------

TOKEN = mint("u-1", ["w-3"])


@pytest.mark.parametrize("code", UNAVAILABLE)
@pytest.mark.parametrize(
    ("event", "path", "body"),
    [
        ("personal_put_document", "/v1/memory/personal/document", {"content": "dashboard", "expected_version": 1}),
        ("team_put_document", "/v1/memory/workspaces/w-3/document", {"content": "dashboard", "expected_version": 1}),
        ("personal_restore", "/v1/memory/personal/document/versions/1/restore", {"expected_version": 1}),
        ("team_restore", "/v1/memory/workspaces/w-3/document/versions/1/restore", {"expected_version": 1}),
    ],
)
def test_a_dashboard_document_write_on_failing_storage_is_503_and_changes_nothing(
    call, aws, faults, event, path, body, code
):
    scope = TEAM if "workspaces" in path else PERSONAL
    context = private() if scope is PERSONAL else {**private(), "visibility": "shared", "workspace_id": "w-3"}
    call("update_memory", {"context": context, "arguments": {"content": "# Memory\n- version one"}})
    before = document_items(aws, scope)
    faults(transact_write_items=code)

    answer = manage(event, path=path, body=body, token=TOKEN)

    assert_503(answer)
    assert document_items(aws, scope) == before


@pytest.mark.parametrize("code", UNAVAILABLE)
@pytest.mark.parametrize("scope", [PERSONAL, TEAM], ids=["personal", "team"])
def test_a_dashboard_delete_on_failing_storage_is_503_and_the_note_stays(call, aws, faults, monkeypatch, scope, code):
    note_id = write_note(scope, datetime(2026, 12, 3, 9, 0, tzinfo=UTC), "still here")
    base = "/v1/memory/personal" if scope is PERSONAL else "/v1/memory/workspaces/w-3"
    event = "personal_delete_note" if scope is PERSONAL else "team_delete_note"
    faults(transact_write_items=code)  # the note leaves in one transaction with the scope's erase mark

    answer = manage(event, path=f"{base}/notes/{note_id}", token=TOKEN)

    assert_503(answer)
    assert notes(aws, scope) == ["still here"]
    heal(monkeypatch)
    assert manage(event, path=f"{base}/notes/{note_id}", token=TOKEN).status == 204
    assert notes(aws, scope) == []


# --- consolidation ----------------------------------------------------------------------------------------

RUN_AT = datetime(2026, 12, 3, 3, 0, tzinfo=UTC)


def _consolidation_model(monkeypatch) -> None:
    scripted_models().fold = FakeChatModel(reply=merge)


@pytest.mark.parametrize("code", UNAVAILABLE)
def test_a_consolidation_whose_save_fails_leaves_every_note_unmarked_then_folds_them_once(
    aws, faults, monkeypatch, code
):
    ids = [write_note(PERSONAL, RUN_AT - timedelta(days=9, minutes=i), f"old fact {i}") for i in range(3)]
    faults(transact_write_items=code)
    _consolidation_model(monkeypatch)

    failed = consolidate()

    assert failed["groups_failed"] == 1 and failed["notes_consolidated"] == 0
    assert all(item["consolidated"] == {"BOOL": False} for item in notes_of(aws))
    assert document_items(aws, PERSONAL) == []
    heal(monkeypatch)
    _consolidation_model(monkeypatch)
    done = consolidate(run_id="run-2")
    assert done["notes_consolidated"] == 3
    assert folded_counts(aws) == dict.fromkeys(ids, 1)


class TransientFaults(FaultyClient):
    """The real client, except that the first ``times`` calls of each operation in ``failing`` fail."""

    def __init__(self, real: Any, failing: dict[str, str], times: int) -> None:
        super().__init__(real, failing)
        self.times = times

    def fails(self, call: int) -> bool:
        return call <= self.times


@pytest.mark.parametrize("operation", ["transact_write_items", "update_item"])  # the save, then a note's mark
def test_a_fold_in_the_planner_is_tried_again_after_a_transient_storage_fault(aws, monkeypatch, operation):
    ids = [write_note(PERSONAL, RUN_AT - timedelta(days=9, minutes=i), f"old fact {i}") for i in range(3)]
    real = make_dynamodb_client
    bootstrap.provide(
        make_dynamodb_client=lambda *a, **k: TransientFaults(real(*a, **k), {operation: "ThrottlingException"}, 1)
    )
    bootstrap.reset()
    _consolidation_model(monkeypatch)

    run = consolidate()

    assert (run["groups_done"], run["groups_failed"], run["groups_planned"]) == (1, 0, 1)
    assert run["notes_consolidated"] == 3
    assert folded_counts(aws) == dict.fromkeys(ids, 1)
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws))


@pytest.mark.parametrize("code", UNAVAILABLE)
def test_a_consolidation_whose_marking_fails_is_finished_by_the_next_run_without_folding_twice(
    aws, faults, monkeypatch, code
):
    ids = [write_note(PERSONAL, RUN_AT - timedelta(days=9, minutes=i), f"old fact {i}") for i in range(3)]
    faults(after=1, update_item=code)  # the first note is marked, then storage throttles
    _consolidation_model(monkeypatch)

    first = consolidate()

    assert (first["groups_done"], first["groups_failed"]) == (0, 1)
    assert len(notes_of(aws)) == 3  # nothing deleted
    pending = [item for item in items(aws, PERSONAL) if item["sk"]["S"] == "consolidation#pending"]
    assert len(pending) == 1  # the saved version's notes, still to mark: the next run finishes them first
    heal(monkeypatch)
    _consolidation_model(monkeypatch)
    consolidate(run_id="run-2")
    assert all(item["consolidated"] == {"BOOL": True} for item in notes_of(aws))
    assert folded_counts(aws) == dict.fromkeys(ids, 1)
    assert sorted(notes_of_texts(aws)) == [f"old fact {i}" for i in range(3)]


def notes_of_texts(aws) -> list[str]:
    return [item["text"]["S"] for item in notes_of(aws)]


# --- retry configuration of every client --------------------------------------------------------------------


def _assert_bounded(client: Any, *, max_attempts: int, read_timeout: float) -> None:
    config = client.meta.config
    # botocore reads ``max_attempts`` as retries after the first attempt; ``total_max_attempts`` is the bound.
    assert config.retries == {"mode": "standard", "total_max_attempts": config.retries["total_max_attempts"]}
    assert 1 <= config.retries["total_max_attempts"] <= max_attempts
    assert 0 < config.connect_timeout <= 5
    assert 0 < config.read_timeout <= read_timeout


def test_every_dynamodb_client_retries_in_standard_mode_with_bounded_attempts_and_timeouts(aws):
    settings = get_settings()
    _assert_bounded(make_dynamodb_client(settings), max_attempts=3, read_timeout=2)
    assert make_dynamodb_client(settings).meta.config.retries["total_max_attempts"] == settings.dynamodb_max_attempts
    for part in ("memory_service", "recall_service", "management"):
        for client in _clients_built_for(part):
            _assert_bounded(client, max_attempts=3, read_timeout=2)
    # The nightly job waits longer than a turn (a request given up on is sent again while the first still runs).
    for part in ("planner", "worker"):
        for client in _clients_built_for(part):
            _assert_bounded(client, max_attempts=3, read_timeout=CONSOLIDATION_READ_TIMEOUT_S)
            assert client.meta.config.read_timeout == CONSOLIDATION_READ_TIMEOUT_S
    worker = bootstrap.bootstrap().worker
    assert worker.service.documents is worker.documents
    # The flush answers within 5 s whatever happens: at most 2 attempts of at most 0.5 s each.
    for client in _clients_built_for("flush_service"):
        _assert_bounded(client, max_attempts=2, read_timeout=0.5)


def _clients_built_for(part: str) -> list[Any]:
    """Every DynamoDB client that building ``part`` builds, in a graph of its own (each store's client comes from
    the graph's one factory)."""
    built: list[Any] = []

    def _make(*args: Any, **kwargs: Any) -> Any:
        built.append(make_dynamodb_client(*args, **kwargs))
        return built[-1]

    getattr(bootstrap.bootstrap(make_dynamodb_client=_make), part)
    assert built, part
    return built


def test_the_bedrock_chat_client_retries_in_standard_mode_with_bounded_attempts_and_timeouts(monkeypatch):
    from agent_memory.providers.chat import chat_model_from_settings

    monkeypatch.setenv("MEMORY_CHAT_MODEL", "bedrock:anthropic.claude-3-haiku-20240307-v1:0")
    bootstrap.reset()
    model = chat_model_from_settings(get_settings(), timeout_s=4.5)

    _assert_bounded(model.client, max_attempts=2, read_timeout=4.5)


def test_the_management_lambda_client_retries_in_standard_mode_with_bounded_attempts_and_timeouts(aws):
    _assert_bounded(bootstrap.services().management.lambda_client, max_attempts=3, read_timeout=2)
