"""docs/api.md §4 ``FlushFunction``: one note per compaction event, within 5 s, never an exception."""

from __future__ import annotations

import io
import json
import time

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from agent_memory import bootstrap
from agent_memory.providers.chat import BedrockChatModel
from agent_memory.providers.embedding import EMBEDDING_DIMENSION, BedrockEmbeddingModel
from tests.support.events import event_body
from tests.support.fake_openai import fake_openai_server
from tests.support.fakes import FakeChatModel, fake_tokens
from tests.support.faults import FaultyClient, provide_clients, provide_real_clients
from tests.support.models import scripted_models
from tests.support.people import partition
from tests.support.scopes import TEAM, note_texts, private, shared

SUMMARY = "Planning the billing-service migration; open: payments sign-off from Dana, rollback plan draft."


@pytest.fixture
def model(monkeypatch):
    """The flush's chat model replaced by a named fake (no model can run here)."""
    fake = FakeChatModel(reply=lambda system, prompt: SUMMARY)
    scripted_models().flush = fake
    return fake


def _flush(call, compaction_id="cmp-1", context=None, messages=None):
    body = event_body("flush")
    body["compaction_id"] = compaction_id
    if context is not None:
        body["context"] = context
    if messages is not None:
        body["messages"] = messages
    return call("flush", body).body


def _notes(aws, pk="ws#w-3"):
    return note_texts(aws, pk)


def test_written_note_is_the_models_summary_with_provenance(call, aws, model):
    answer = _flush(call)

    assert answer["status"] == "written"
    assert "model_free" not in answer  # a model wrote it
    note = answer["note"]
    assert note["text"] == SUMMARY
    assert note["source"] == "flush"
    assert note["origin"] == {"user_id": "u-1", "thread_id": "t-9", "compaction_id": "cmp-1"}
    assert (note["day"], note["position"]) == ("2026-12-03", 1)
    assert _notes(aws) == [SUMMARY]
    system, prompt = model.calls[0]
    assert "500 characters" in system and "open threads" in system
    assert "user: Can you help me plan the Q1 migration" in prompt


def test_the_claim_expires_after_30_days_and_nothing_else_does(call, aws, model):
    _flush(call)

    items = aws.query(
        TableName="MemoryTable", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "ws#w-3"}}
    )["Items"]
    expiring = {item["sk"]["S"]: int(item["expires_at"]["N"]) for item in items if "expires_at" in item}
    assert list(expiring) == ["flush#t-9#cmp-1"]
    assert abs(expiring["flush#t-9#cmp-1"] - (time.time() + 30 * 24 * 3600)) < 60


def test_the_note_shows_up_in_the_next_turns_context(call, model):
    _flush(call)

    context = call("context", {"context": shared("w-3")}).body
    assert SUMMARY in context["system_prompt"]


def test_a_second_call_for_the_same_event_is_a_duplicate_without_a_model_call(call, aws, model):
    first = _flush(call)

    second = _flush(call)

    assert second == {"status": "duplicate", "note": first["note"]}
    assert len(model.calls) == 1
    assert _notes(aws) == [SUMMARY]


def test_the_same_compaction_id_in_another_scope_is_another_event(call, aws, model):
    assert _flush(call, context=shared("w-3"))["status"] == "written"
    assert _flush(call, context=private("u-1"))["status"] == "written"
    assert _notes(aws, "user#u-1") == [SUMMARY]


def test_the_same_compaction_id_from_another_thread_is_another_event(call, aws, model):
    """Bob's ``compaction-1`` in his thread is not a duplicate of Alice's in hers: his summary is written."""
    model.reply = lambda system, prompt: "alice's summary" if "alice" in prompt else "bob's summary"
    alice = _flush(call, "compaction-1", shared("w-3", user="u-alice", thread="t-alice"), [_says("alice")])
    bob = _flush(call, "compaction-1", shared("w-3", user="u-bob", thread="t-bob"), [_says("bob")])
    bob_again = _flush(call, "compaction-1", shared("w-3", user="u-bob", thread="t-bob"), [_says("bob")])

    assert (alice["status"], bob["status"], bob_again["status"]) == ("written", "written", "duplicate")
    assert bob["note"]["text"] == "bob's summary" and bob_again["note"] == bob["note"]
    assert sorted(_notes(aws)) == ["alice's summary", "bob's summary"]


def _says(who):
    return {"role": "user", "content": f"{who} here: the plan for the week"}


def _as_claimed_before_claims_named_their_thread(aws, thread, compaction_id):
    """Move the claim to the shape a service without threads in its claims wrote."""
    key = {"pk": {"S": "ws#w-3"}, "sk": {"S": f"flush#{thread}#{compaction_id}"}}
    item = aws.get_item(TableName="MemoryTable", Key=key)["Item"]
    aws.delete_item(TableName="MemoryTable", Key=key)
    aws.put_item(TableName="MemoryTable", Item={**item, "sk": {"S": f"flush#{compaction_id}"}})


def test_a_claim_written_before_the_upgrade_still_holds_its_threads_event_only(call, aws, model):
    first = _flush(call)  # thread t-9 of events/flush.json
    _as_claimed_before_claims_named_their_thread(aws, "t-9", "cmp-1")

    again = _flush(call)
    other_thread = _flush(call, context=shared("w-3", user="u-2", thread="t-other"))

    assert again == {"status": "duplicate", "note": first["note"]}
    assert other_thread["status"] == "written" and other_thread["note"]["origin"]["thread_id"] == "t-other"
    assert len(model.calls) == 2 and _notes(aws) == [SUMMARY, SUMMARY]
    assert sorted(sk for sk in partition(aws, TEAM) if sk.startswith("flush#")) == [
        "flush#cmp-1",
        "flush#t-other#cmp-1",
    ]


def test_a_flush_of_before_the_upgrade_still_running_fails_this_one_and_writes_nothing(call, aws, model):
    now = int(time.time())
    aws.put_item(
        TableName="MemoryTable",
        Item={
            "pk": {"S": "ws#w-3"},
            "sk": {"S": "flush#cmp-1"},
            "token": {"S": "an-older-invocation"},
            "status": {"S": "in_progress"},
            "lease_until": {"N": str(now + 10)},
            "expires_at": {"N": str(now + 3600)},
        },
    )

    answer = _flush(call)

    assert answer["status"] == "failed" and "running" in answer["reason"]
    assert model.calls == [] and _notes(aws) == []
    assert [sk for sk in partition(aws, TEAM) if sk.startswith("flush#")] == ["flush#cmp-1"]


def test_a_long_answer_is_capped_at_500_characters(call, model):
    model.reply = lambda system, prompt: "- " + "word " * 300

    note = _flush(call)["note"]

    assert len(note["text"]) <= 500
    assert note["text"].startswith("word word")


@pytest.mark.parametrize("value", ["false", "0", "no", "off", "FALSE", "Off", "NO", " no ", "False"])
def test_the_toggle_disables_in_every_spelling(call, aws, model, monkeypatch, value):
    monkeypatch.setenv("SURFSENSE_MEMORY_FLUSH", value)
    bootstrap.reset()
    scripted_models().flush = model

    assert _flush(call) == {"status": "disabled", "note": None}
    assert model.calls == []
    assert _notes(aws) == []


@pytest.mark.parametrize("value", ["true", "on", "1", "yes", ""])
def test_other_toggle_values_leave_it_on(call, model, monkeypatch, value):
    monkeypatch.setenv("SURFSENSE_MEMORY_FLUSH", value)
    bootstrap.reset()
    scripted_models().flush = model

    assert _flush(call)["status"] == "written"


def _assert_failed_and_nothing_written(answer, aws, reason_part):
    assert answer["status"] == "failed"
    assert answer["note"] is None
    assert reason_part in answer["reason"]
    assert _notes(aws) == []


def test_no_model_configured_is_failed(call, aws):
    _assert_failed_and_nothing_written(_flush(call), aws, "no chat model")


def test_a_model_error_is_failed_and_a_retry_can_write(call, aws, model):
    model.fail_with = "the chat model failed: ThrottlingException"

    _assert_failed_and_nothing_written(_flush(call), aws, "ThrottlingException")

    model.fail_with = None
    assert _flush(call)["status"] == "written"


@pytest.mark.parametrize("reply", ["", "   ", "# A heading", "- ", "\x00\x01"])
def test_an_unusable_answer_is_failed(call, aws, model, reply):
    model.reply = lambda system, prompt: reply

    _assert_failed_and_nothing_written(_flush(call), aws, "")


def test_a_slow_model_fails_within_the_budget_and_writes_nothing(call, aws, model):
    model.delay_s = 8
    started = time.monotonic()

    answer = _flush(call)

    assert time.monotonic() - started < 5.5
    _assert_failed_and_nothing_written(answer, aws, "did not answer")
    model.abandon()


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b.pop("compaction_id"),
        lambda b: b.update(compaction_id="has space"),
        lambda b: b.update(compaction_id=""),
        lambda b: b.update(messages=[]),
        lambda b: b.update(messages="hello"),
        lambda b: b.update(messages=[{"role": "robot", "content": "x"}]),
        lambda b: b.update(messages=[{"role": "user"}]),
        lambda b: b.update(messages=[{"role": "user", "content": 5}]),
        lambda b: b.pop("context"),
        lambda b: b.update(context={"user_id": "u-1", "thread_id": "t", "visibility": "shared"}),
        lambda b: b.update(extra=1),
    ],
)
def test_a_bad_payload_is_failed_without_a_model_call(call, aws, model, mutate):
    body = event_body("flush")
    mutate(body)

    answer = call("flush", body).body

    _assert_failed_and_nothing_written(answer, aws, "invalid_input")
    assert model.calls == []


@pytest.mark.parametrize("event", [None, [], "flush", 42])
def test_a_payload_that_is_not_an_object_is_failed(aws, lambda_context, event):
    from local.template import load_handler

    answer = load_handler("FlushFunction")(event, lambda_context)

    assert answer["status"] == "failed"


def test_someone_elses_private_thread_is_failed(call, aws, model):
    answer = _flush(call, context=private("u-1", thread_owner_id="u-2"))

    _assert_failed_and_nothing_written(answer, aws, "forbidden")
    assert model.calls == []


def _throttled(operation: str) -> None:
    """Every DynamoDB client the graph builds from now on is throttled on ``operation``."""
    provide_clients(lambda client: FaultyClient(client, {operation: "ThrottlingException"}))


def test_throttled_claim_is_failed_without_a_model_call(call, aws, model):
    _throttled("put_item")

    _assert_failed_and_nothing_written(_flush(call), aws, "storage")
    assert model.calls == []


def test_throttled_write_is_failed_and_the_claim_is_released(call, aws, model):
    _throttled("transact_write_items")

    _assert_failed_and_nothing_written(_flush(call), aws, "storage")

    provide_real_clients()
    scripted_models().flush = model
    assert _flush(call)["status"] == "written"


@pytest.fixture
def fake_openai(monkeypatch):
    """A fake OpenAI-compatible server in its own process, for sandboxes forked from this one."""
    with fake_openai_server(reply=SUMMARY, delay_s=0.3) as fake:
        monkeypatch.setenv("MEMORY_CHAT_MODEL", "openai:fake")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        yield fake


def test_five_parallel_calls_for_one_event_write_one_note(fake_openai, sandboxes):
    body = event_body("flush")

    answers = [a.body for a in sandboxes([("flush", body)] * 5)]

    statuses = sorted(a["status"] for a in answers)
    assert statuses == ["duplicate"] * 4 + ["written"], answers
    assert fake_openai.calls() == 1
    context = sandboxes([("context", {"context": body["context"]})])[0].body
    assert [n["text"] for n in context["recent_notes"]] == [SUMMARY]


def test_with_local_extractive_the_note_keeps_the_conversations_dates_and_names(call, aws, monkeypatch):
    monkeypatch.setenv("MEMORY_CHAT_MODEL", "local:extractive")
    bootstrap.reset()

    answer = _flush(call)

    assert (answer["status"], answer["model_free"]) == ("written", True)
    assert answer["note"]["text"] == (
        "User: Probably the week of January 12. I still need to ask Dana about the payments sign-off. "
        "Assistant: Noted: tentative cutover week of Jan 12; open: payments sign-off (Dana), rollback plan draft."
    )
    assert _notes(aws) == [answer["note"]["text"]]


def test_with_local_extractive_a_secret_is_redacted_before_a_sentence_is_cut(call, aws, monkeypatch):
    """The summary cuts a long sentence; a cut through a secret would leave a piece that no detector knows."""
    monkeypatch.setenv("MEMORY_CHAT_MODEL", "local:extractive")
    bootstrap.reset()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    for filler in (150, 170, 190):  # the token crosses the summary's cut of a sentence at one of these
        long = "We decided on 12 January to deploy with " + "x" * filler + " " + token + " as the deploy token."
        answer = _flush(call, compaction_id=f"cmp-{filler}", messages=[{"role": "user", "content": long}])

        assert answer["status"] == "written"
        assert "ghp_" not in answer["note"]["text"] and token[8:20] not in answer["note"]["text"]


def test_with_none_there_is_no_model_and_the_flush_fails(call, aws, monkeypatch):
    monkeypatch.setenv("MEMORY_CHAT_MODEL", "none")
    bootstrap.reset()

    assert _flush(call)["status"] == "failed"
    assert _notes(aws) == []


def test_the_models_tokens_are_metrics_with_the_calls_purpose(call, aws, model, capsys):
    _flush(call)

    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"ModelOutputTokens"' in line]
    assert [(r["purpose"], r["ModelOutputTokens"]) for r in records] == [("flush", [fake_tokens(SUMMARY)])]
    assert "purpose" in records[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"][0]


def test_the_bedrock_models_calls_are_ones_the_flush_function_is_granted(call, aws, monkeypatch):
    """With the real Bedrock providers on their client (botocore's Stubber answering), the flush's Converse and its
    note's InvokeModel, made in the handler, are held to FlushFunction's policies (tests/support/iam):
    bedrock:InvokeModel on the chat model and on the embedding model that the template passes it."""
    chat, embedding = "anthropic.claude-3-haiku-20240307-v1:0", "amazon.titan-embed-text-v2:0"
    monkeypatch.setenv("MEMORY_CHAT_MODEL", f"bedrock:{chat}")
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", f"bedrock:{embedding}")
    bootstrap.reset()
    client = boto3.client("bedrock-runtime")  # the test session's: its calls are checked as the handler's
    scripted_models().flush = BedrockChatModel(client, chat)
    bootstrap.provide(embedding_model=BedrockEmbeddingModel(client, embedding))
    summary = {"message": {"role": "assistant", "content": [{"text": SUMMARY}]}}
    vector = json.dumps({"embedding": [0.5] * EMBEDDING_DIMENSION}).encode()

    with Stubber(client) as stub:
        stub.add_response(
            "converse", {"output": summary, "stopReason": "end_turn", "usage": _USAGE, "metrics": {"latencyMs": 1}}
        )
        stub.add_response(
            "invoke_model", {"body": StreamingBody(io.BytesIO(vector), len(vector)), "contentType": "json"}
        )
        answer = _flush(call)
        stub.assert_no_pending_responses()

    assert answer["status"] == "written"


_USAGE = {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120}
