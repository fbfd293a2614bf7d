"""docs/api.md §3 ``extract``: a stretch of conversation turned into at most 10 notes, each citing its messages,
once per ``(thread_id, extraction_id)``, within 10 s whatever the model does."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.memory.extraction import EXTRACTION_BUDGET_S
from agent_memory.storage.note_store import NoteStore
from tests.support.events import event_body
from tests.support.fake_openai import fake_openai_server
from tests.support.fakes import FakeChatModel
from tests.support.models import scripted_models
from tests.support.people import partition
from tests.support.scopes import note_texts

SCOPE = Scope("personal", "u-1")
PK = SCOPE.key
OSAKA = "The user is flying to Osaka on March 3rd for two weeks."
QUIET = "The user prefers quiet neighbourhoods over the big shopping streets."


def facts(*cited: tuple[str, list[object]]) -> dict[str, object]:
    return {"facts": [{"text": text, "messages": messages} for text, messages in cited]}


def scripted(*cited: tuple[str, list[object]], delay_s: float = 0.0) -> FakeChatModel:
    model = FakeChatModel(reply=lambda system, prompt: facts(*cited), delay_s=delay_s)
    scripted_models().extraction = model
    return model


def _extract(call, extraction_id="ext-1", thread="t-9", messages=None):
    body = event_body("extract")
    body["extraction_id"] = extraction_id
    body["context"]["thread_id"] = thread
    if messages is not None:
        body["messages"] = messages
    answer = call("extract", body)
    assert answer.status == 200, answer.body
    return answer.body


def test_the_facts_are_written_with_the_indexes_of_their_messages(call, aws):
    model = scripted((OSAKA, [0]), (QUIET, [2, 1]))

    answer = _extract(call)

    assert answer["status"] == "written" and answer["skipped"] == []
    assert [(note["text"], note["origin"]) for note in answer["notes"]] == [
        (OSAKA, {"user_id": "u-1", "thread_id": "t-9", "messages": [0]}),
        (QUIET, {"user_id": "u-1", "thread_id": "t-9", "messages": [1, 2]}),
    ]
    assert {note["source"] for note in answer["notes"]} == {"extraction"}
    assert sorted(note_texts(aws, PK)) == sorted([OSAKA, QUIET])
    listed = call("recall", {"context": event_body("extract")["context"], "arguments": {"query": "Osaka"}}).body
    assert listed["notes"][0]["origin"]["messages"] == [0]  # the citation is stored with the note
    system, prompt = model.calls[0]
    assert "save_facts" in system and "at most 10 facts" in system
    assert "[0] user: I'm flying to Osaka on March 3rd" in prompt and "[2] user: Yes. I prefer quiet" in prompt
    assert model.tools[0] is not None and model.tools[0].name == "save_facts"


def test_over_an_openai_compatible_server_save_facts_is_a_tool_call_and_its_tokens_are_recorded(
    call, aws, monkeypatch, capsys
):
    with fake_openai_server(reply="no tool calls here") as fake:
        monkeypatch.setenv("MEMORY_CHAT_MODEL", "openai:fake")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        bootstrap.reset()

        answer = _extract(call)

    assert [(note["text"], note["origin"]["messages"]) for note in answer["notes"]] == [
        ("The user said: I'm flying to Osaka on March 3rd for two weeks.", [0]),
        ("The user said: Yes. I prefer quiet neighbourhoods over the big shopping streets.", [2]),
    ]
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"ModelInputTokens"' in line]
    assert [(record["purpose"], record["ModelInputTokens"][0] > 100) for record in printed] == [("extraction", True)]


def test_a_fact_the_scope_already_holds_is_skipped_and_listed_with_its_note(call, aws):
    held = call("remember", {"context": event_body("extract")["context"], "arguments": {"text": QUIET}}).body
    scripted((OSAKA, [0]), ("the user prefers quiet neighbourhoods over big shopping streets", [2]))

    answer = _extract(call)

    assert [note["text"] for note in answer["notes"]] == [OSAKA]
    assert answer["skipped"] == [
        {"text": "the user prefers quiet neighbourhoods over big shopping streets", "similar": [held["note"]["id"]]}
    ]
    assert sorted(note_texts(aws, PK)) == sorted([QUIET, OSAKA])


def test_a_fact_citing_no_message_of_the_request_is_dropped(call, aws):
    scripted(
        (OSAKA, [0]),
        ("Invented from nowhere.", [3]),  # three messages: 0 to 2
        ("Cited nothing.", []),
        ("Cited as text.", ["0", True, -1]),
        ("Half right.", [9, 2]),
    )

    answer = _extract(call)

    assert [(note["text"], note["origin"]["messages"]) for note in answer["notes"]] == [
        (OSAKA, [0]),
        ("Half right.", [2]),
    ]
    assert sorted(note_texts(aws, PK)) == sorted([OSAKA, "Half right."])


def test_at_most_ten_facts_of_at_most_300_characters_and_each_through_the_text_pipeline(call, aws):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    scripted_models().extraction = FakeChatModel(
        reply=lambda system, prompt: facts(
            (f"The deploy token is {token}.", [0]),
            ("x" * 400, [1]),
            *[(f"Fact {n} of twelve.", [2]) for n in range(10)],
        )
    )

    answer = _extract(call)

    texts = [note["text"] for note in answer["notes"]]
    assert len(texts) == 10  # the first ten of twelve
    assert "ghp_" not in texts[0] and "[redacted" in texts[0]
    assert texts[1] == "x" * 300
    assert texts[9] == "Fact 7 of twelve."


def test_a_repeat_of_the_id_is_a_duplicate_with_the_first_notes_and_no_model_call(call, aws):
    model = scripted((OSAKA, [0]))
    first = _extract(call)

    again = _extract(call)

    assert again == {"status": "duplicate", "notes": first["notes"], "skipped": []}
    assert len(model.calls) == 1
    assert note_texts(aws, PK) == [OSAKA]
    other_thread = _extract(call, thread="t-other")  # the same id from another thread is another extraction
    assert other_thread["status"] == "written"
    assert [sk for sk in partition(aws, SCOPE) if sk.startswith("extract#")] == [
        "extract#t-9#ext-1",
        "extract#t-other#ext-1",
    ]


def test_the_budget_holds_with_a_model_that_never_answers_and_nothing_is_written(call, aws):
    model = scripted((OSAKA, [0]), delay_s=3600)
    graph = bootstrap.services()
    assert graph.extraction_service.budget_s == EXTRACTION_BUDGET_S == 10.0  # the deployment's budget
    # A test's budget of 3 s: the model gets what is left less the 2 s kept for the writes.
    bootstrap.provide(extraction_service=dataclasses.replace(graph.extraction_service, budget_s=3.0))

    started = time.monotonic()
    answer = _extract(call)
    took = time.monotonic() - started
    model.abandon()

    assert answer["status"] == "failed" and answer["notes"] == []
    assert "did not answer within 1.0 s" in answer["reason"] and "nothing was written" in answer["reason"]
    assert took < 3.0
    assert note_texts(aws, PK) == []
    scripted((OSAKA, [0]))  # a retry of the same id asks again, and writes
    assert _extract(call)["status"] == "written"
    assert note_texts(aws, PK) == [OSAKA]


def test_slow_writes_stop_at_the_budget_and_the_notes_written_stay_for_a_retry_to_skip(call, aws):
    """A slow embedding model (each fact's vector takes 0.5 s) and ten facts: the writes stop in time."""
    scripted(
        *[
            (f"Fact {word} about the user.", [0])
            for word in ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
        ]
    )
    graph = bootstrap.services()
    extractor = graph.extraction_service
    slow = NoteStore(aws, "MemoryTable", graph.quota, vectors=lambda text: time.sleep(0.5))
    bootstrap.provide(extraction_service=dataclasses.replace(extractor, notes=slow, budget_s=3.0))

    started = time.monotonic()
    answer = _extract(call)
    took = time.monotonic() - started

    assert answer["status"] == "failed" and "budget ran out" in answer["reason"]
    assert took < 3.0
    written = note_texts(aws, PK)
    assert 0 < len(written) < 10 and f"{len(written)} of its notes were written and stay" in answer["reason"]
    bootstrap.provide(extraction_service=dataclasses.replace(extractor, budget_s=10.0))
    retried = _extract(call)  # the same id again: the notes written are facts the scope holds
    assert retried["status"] == "written" and len(retried["skipped"]) == len(written)
    assert len(note_texts(aws, PK)) == 10


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (lambda system, prompt: "Sure! The user likes Osaka.", "without calling save_facts"),
        (lambda system, prompt: {"facts": "none"}, "holds no list of facts"),
    ],
)
def test_an_answer_without_facts_fails_and_writes_nothing(call, aws, reply, reason):
    scripted_models().extraction = FakeChatModel(reply=reply)

    answer = _extract(call)

    assert answer["status"] == "failed" and reason in answer["reason"]
    assert note_texts(aws, PK) == []


def test_a_failing_model_fails_and_the_same_id_can_be_sent_again(call, aws):
    scripted_models().extraction = FakeChatModel(fail_with="the chat model failed: ReadTimeout")

    assert _extract(call)["status"] == "failed"
    scripted((OSAKA, [0]))
    assert _extract(call)["status"] == "written"


def test_no_chat_model_fails(call, aws, monkeypatch):
    monkeypatch.setenv("MEMORY_CHAT_MODEL", "none")
    bootstrap.reset()

    answer = _extract(call)

    assert answer["status"] == "failed" and "MEMORY_CHAT_MODEL" in answer["reason"]


def test_a_scope_at_its_days_quota_fails_with_the_quotas_reason_as_the_flush_does(call, aws, monkeypatch):
    """The reason names the refusal (its code and message, as the flush's), not the exception's class."""
    monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_DAY", "1")
    bootstrap.reset()
    scripted((OSAKA, [0]), (QUIET, [2]))

    answer = _extract(call)

    assert answer["status"] == "failed" and answer["notes"] == []
    assert answer["reason"].startswith("quota_exceeded: this memory has written its 1 notes for today")
    assert "1 of its notes were written and stay" in answer["reason"]
    assert note_texts(aws, PK) == [OSAKA]


def test_with_local_extractive_the_facts_are_the_users_first_person_statements(call, aws, monkeypatch):
    monkeypatch.setenv("MEMORY_CHAT_MODEL", "local:extractive")
    bootstrap.reset()

    answer = _extract(call)

    assert [(note["text"], note["origin"]["messages"]) for note in answer["notes"]] == [
        ("User: I'm flying to Osaka on March 3rd for two weeks.", [0]),
        ("User: I prefer quiet neighbourhoods over the big shopping streets.", [2]),
    ]


@pytest.mark.parametrize(
    "change",
    [
        lambda body: body.pop("extraction_id"),
        lambda body: body.update(extraction_id="has space"),
        lambda body: body.update(messages=[]),
        lambda body: body.update(messages=[{"role": "narrator", "content": "x"}]),
        lambda body: body.update(arguments={}),
        lambda body: body["context"].pop("visibility"),
    ],
)
def test_bad_input_is_a_422_and_nothing_is_claimed_or_written(call, aws, change):
    model = scripted((OSAKA, [0]))
    body = event_body("extract")
    change(body)

    answer = call("extract", body)

    assert answer.status == 422, answer.body
    assert partition(aws, SCOPE) == [] and model.calls == []
