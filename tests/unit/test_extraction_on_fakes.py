"""The extraction (docs/api.md §3 ``extract``) on the in-memory fakes (tests/support/fake_extraction.py and the
world's note store): at most 10 facts, each citing its messages, at most once per ``(thread_id, extraction_id)``,
within its budget, never an exception; a failure gives the claim back, and the notes already written stay for a
retry to skip. The stores' own behaviours are the contract tests' (tests/support/extraction_contracts.py); these are
the use case's, each in milliseconds."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.domain.commands import ExtractCommand
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.domain.shapes import ExtractedAnswer
from agent_memory.memory.extraction import ExtractionService
from agent_memory.storage.extraction_store import LEASE_S
from agent_memory.storage.usage_store import Quota
from tests.support.fake_extraction import FakeExtractionStore
from tests.support.fake_stores import FakeNoteStore, FakeWorld, Write
from tests.support.fakes import FakeChatModel
from tests.support.models import ScriptedChatModels
from tests.support.scopes import PERSONAL, TEAM, stored

DAY = "2026-12-03"  # MEMORY_NOW's day
OSAKA = "The user is flying to Osaka on March 3rd for two weeks."
QUIET = "The user prefers quiet neighbourhoods over the big shopping streets."
MESSAGES = (
    ("user", "I'm flying to Osaka on March 3rd for two weeks."),
    ("assistant", "Nice! Any preferences for where to stay?"),
    ("user", "Yes. I prefer quiet neighbourhoods over the big shopping streets."),
)


def command(
    scope: Scope = PERSONAL, *, thread: str = "t-9", extraction_id: str = "ext-1", messages=MESSAGES
) -> ExtractCommand:
    return ExtractCommand(scope, Origin("u-1", thread), extraction_id, tuple(messages))


def facts(*cited: tuple[str, list[object]]) -> dict[str, object]:
    return {"facts": [{"text": text, "messages": messages} for text, messages in cited]}


@dataclass
class Extractions:
    """One world, the extraction's fake stores on it, and the model the extraction asks (``scripted.extraction``)."""

    quota: Quota | None = None
    world: FakeWorld = field(default_factory=FakeWorld)
    scripted: ScriptedChatModels = field(default_factory=ScriptedChatModels)

    def __post_init__(self) -> None:
        self.notes = FakeNoteStore(self.world, self.quota)
        self.claims = FakeExtractionStore(self.world)
        self.script((OSAKA, [0]), (QUIET, [2, 1]))

    def script(self, *cited: tuple[str, list[object]]) -> FakeChatModel:
        self.scripted.extraction = FakeChatModel(reply=lambda system, prompt: facts(*cited))
        return self.model

    @property
    def model(self) -> FakeChatModel:
        model = self.scripted.extraction
        assert isinstance(model, FakeChatModel)
        return model

    def service(self, **options: Any) -> ExtractionService[Write]:
        return ExtractionService(self.notes, self.claims, lambda: self.scripted("extraction"), **options)

    def extract(self, one: ExtractCommand | None = None, **options: Any) -> ExtractedAnswer:
        return self.service(**options).extract(one or command())

    def texts(self, scope: Scope = PERSONAL) -> list[str]:
        return [note.text for note in self.notes.every_note(scope)]

    def remembered(self, text: str, scope: Scope = PERSONAL) -> str:
        created = datetime(2026, 12, 3, 8, tzinfo=UTC)
        origin = Origin("u-1", "t-1")
        return self.notes.append(scope, created=created, text=stored(text), source="remember", origin=origin).id


@pytest.fixture
def extractions() -> Extractions:
    return Extractions()


def _texts(answer: ExtractedAnswer) -> list[str]:
    return [note.text for note in answer.notes]


# --- written ----------------------------------------------------------------------------------------------


def test_the_facts_are_written_citing_their_messages_and_listed_in_the_written_claim(extractions) -> None:
    answer = extractions.extract()

    assert (answer.status, answer.skipped, answer.reason) == ("written", [], None)
    assert [(note.text, note.source, note.origin.messages) for note in answer.notes] == [
        (OSAKA, "extraction", [0]),
        (QUIET, "extraction", [1, 2]),
    ]
    assert extractions.texts() == [OSAKA, QUIET]
    claim = extractions.claims.held(command())
    assert (claim["status"], claim["note_ids"]) == ("written", [f"{DAY}.1", f"{DAY}.2"])
    assert "lease_until" not in claim
    assert extractions.notes.usage.notes_on(PERSONAL, DAY) == 2


def test_the_prompt_numbers_the_messages_and_offers_save_facts(extractions) -> None:
    extractions.extract()

    ((system, prompt),) = extractions.model.calls
    assert "save_facts" in system and "[0] user: I'm flying to Osaka" in prompt
    assert extractions.model.tools[0] is not None and extractions.model.tools[0].name == "save_facts"


def test_a_fact_the_scope_holds_is_skipped_and_listed_with_its_note(extractions) -> None:
    held = extractions.remembered(QUIET)
    extractions.script((OSAKA, [0]), ("the user prefers quiet neighbourhoods over big shopping streets", [2]))

    answer = extractions.extract()

    assert _texts(answer) == [OSAKA]
    assert [(one.text, one.similar) for one in answer.skipped] == [
        ("the user prefers quiet neighbourhoods over big shopping streets", [held])
    ]
    assert extractions.texts() == [QUIET, OSAKA]


def test_a_fact_repeating_an_earlier_fact_of_the_same_call_is_skipped(extractions) -> None:
    extractions.script((OSAKA, [0]), ("the user is flying to Osaka on March 3rd for two weeks", [0]))

    answer = extractions.extract()

    assert _texts(answer) == [OSAKA]
    assert [one.similar for one in answer.skipped] == [[f"{DAY}.1"]]


def test_the_notes_of_another_scope_are_never_compared(extractions) -> None:
    extractions.remembered(OSAKA, TEAM)

    assert _texts(extractions.extract()) == [OSAKA, QUIET]


def test_a_secret_in_a_fact_is_redacted_before_it_is_stored(extractions) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    extractions.script((f"The deploy token is {token}.", [0]))

    answer = extractions.extract()

    assert "[redacted" in _texts(answer)[0]
    assert token not in repr(extractions.world.between(PERSONAL.key, "", "\uffff"))


def test_a_fact_empty_after_cleaning_is_no_fact(extractions) -> None:
    extractions.script(("# A heading", [0]), ("   ", [1]), (OSAKA, [0]))

    answer = extractions.extract()

    assert (answer.status, _texts(answer), answer.skipped) == ("written", [OSAKA], [])


def test_without_a_model_the_extractive_branch_writes_the_users_first_person_statements(extractions) -> None:
    extractions.scripted.extraction = None

    answer = extractions.extract(extractive=True)

    assert [(note.text, note.origin.messages) for note in answer.notes] == [
        ("User: I'm flying to Osaka on March 3rd for two weeks.", [0]),
        ("User: I prefer quiet neighbourhoods over the big shopping streets.", [2]),
    ]


# --- at most once -----------------------------------------------------------------------------------------


def test_a_repeat_of_the_id_is_a_duplicate_with_the_first_notes_and_no_model_call(extractions) -> None:
    first = extractions.extract()

    again = extractions.extract()

    assert (again.status, again.notes, again.skipped) == ("duplicate", first.notes, [])
    assert len(extractions.model.calls) == 1 and extractions.texts() == [OSAKA, QUIET]


def test_a_duplicate_leaves_out_a_note_deleted_since(extractions) -> None:
    extractions.extract()
    assert extractions.notes.delete(PERSONAL, DAY, 1)

    again = extractions.extract()

    assert (again.status, _texts(again)) == ("duplicate", [QUIET])


def test_a_duplicate_whose_notes_cannot_be_read_answers_without_them(extractions) -> None:
    extractions.extract()
    extractions.world.faults.fail("notes.get_many")

    again = extractions.extract()

    assert (again.status, again.notes) == ("duplicate", [])


def test_the_same_id_from_another_thread_or_scope_is_another_extraction(extractions) -> None:
    extractions.extract()

    assert extractions.extract(command(thread="t-other")).status == "written"
    assert extractions.extract(command(TEAM)).status == "written"
    assert len(extractions.model.calls) == 3


def test_a_repeat_while_the_first_runs_fails_without_a_model_call(extractions) -> None:
    extractions.claims.claim(command(), token="running", now_epoch=int(time.time()))

    answer = extractions.extract()

    assert answer.status == "failed" and "is running" in (answer.reason or "")
    assert extractions.model.calls == [] and extractions.texts() == []
    assert extractions.claims.held(command())["token"] == "running"  # the running one's claim is left alone


def test_a_claim_whose_holder_died_is_taken_over(extractions) -> None:
    extractions.claims.claim(command(), token="dead", now_epoch=int(time.time()) - LEASE_S - 1)

    assert extractions.extract().status == "written"


def test_a_claim_taken_over_meanwhile_keeps_the_slow_extraction_from_writing(extractions) -> None:
    """The model answers after this call's lease ran out and another call took the id: no note of the slow one."""

    def taken_over() -> None:
        extractions.claims.claim(command(), token="other", now_epoch=int(time.time()) + LEASE_S + 1)

    extractions.world.faults.before("notes.append", taken_over)

    answer = extractions.extract()

    assert answer.status == "failed" and answer.reason == "storage: Cancelled"
    assert extractions.texts() == []
    assert extractions.notes.usage.notes_on(PERSONAL, DAY) == 0  # its position given back
    assert extractions.claims.held(command())["token"] == "other"  # the other's claim is not released


# --- failed ---------------------------------------------------------------------------------------------


def test_a_failing_model_fails_writes_nothing_and_the_same_id_asks_again(extractions) -> None:
    extractions.scripted.extraction = FakeChatModel(fail_with="the chat model failed: ReadTimeout")

    failed = extractions.extract()

    assert failed.status == "failed" and failed.reason == "the chat model failed: ReadTimeout; nothing was written"
    assert extractions.texts() == [] and extractions.claims.held(command())["lease_until"] == 0
    extractions.script((OSAKA, [0]))
    assert _texts(extractions.extract()) == [OSAKA]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (lambda system, prompt: "Sure! The user likes Osaka.", "without calling save_facts"),
        (lambda system, prompt: {"facts": "none"}, "holds no list of facts"),
    ],
)
def test_an_answer_without_facts_fails_and_writes_nothing(extractions, reply, reason) -> None:
    extractions.scripted.extraction = FakeChatModel(reply=reply)

    answer = extractions.extract()

    assert answer.status == "failed" and reason in (answer.reason or "") and extractions.texts() == []


def test_no_chat_model_fails(extractions) -> None:
    extractions.scripted.extraction = None

    answer = extractions.extract()

    assert answer.status == "failed" and "MEMORY_CHAT_MODEL" in (answer.reason or "")
    assert extractions.texts() == [] and extractions.claims.held(command())["lease_until"] == 0


def test_a_model_that_never_answers_fails_within_the_budget(extractions) -> None:
    extractions.model.delay_s = 3600

    started = time.monotonic()
    answer = extractions.extract(budget_s=2.5)
    took = time.monotonic() - started
    extractions.model.abandon()

    assert answer.status == "failed" and "did not answer within 0.5 s" in (answer.reason or "")
    assert took < 2.5 and extractions.texts() == []


def test_a_claim_that_fails_writes_nothing_and_asks_no_model(extractions) -> None:
    extractions.world.faults.fail("extractions.claim")

    answer = extractions.extract()

    assert answer.status == "failed" and answer.reason == "storage: StorageUnavailable; nothing was written"
    assert extractions.model.calls == [] and extractions.texts() == []


def test_a_claim_whose_answers_were_all_lost_is_given_back(extractions) -> None:
    extractions.world.faults.lose_answers("extractions.claim", times=3)  # the put applied; every answer lost

    answer = extractions.extract()

    assert answer.status == "failed" and extractions.claims.held(command())["lease_until"] == 0
    assert extractions.extract().status == "written"  # the same id, sent again, claims it at once


def test_a_write_failing_midway_keeps_the_notes_written_and_a_retry_skips_them(extractions) -> None:
    faults = extractions.world.faults
    faults.before("notes.append", lambda: None)  # the first fact's write goes through
    faults.before("notes.append", lambda: faults.fail("notes.append"))  # the second's fails

    answer = extractions.extract()

    assert answer.status == "failed" and answer.notes == []
    assert "storage is unavailable" in (answer.reason or "")  # the storage's own refusal, as the flush says it
    assert (answer.reason or "").endswith("; 1 of its notes were written and stay (a retry skips them as held)")
    assert extractions.texts() == [OSAKA]
    assert extractions.claims.held(command())["note_ids"] == [f"{DAY}.1"]
    retried = extractions.extract()
    assert (retried.status, _texts(retried)) == ("written", [QUIET])
    assert [one.similar for one in retried.skipped] == [[f"{DAY}.1"]]


def test_a_finish_that_fails_answers_failed_and_gives_the_claim_back(extractions) -> None:
    extractions.world.faults.fail("extractions.finish")

    answer = extractions.extract()

    assert answer.status == "failed" and "2 of its notes were written and stay" in (answer.reason or "")
    claim = extractions.claims.held(command())
    assert (claim["status"], claim["lease_until"]) == ("in_progress", 0)
    retried = extractions.extract()
    assert (retried.status, retried.notes, len(retried.skipped)) == ("written", [], 2)


def test_a_release_that_fails_still_answers(extractions) -> None:
    extractions.scripted.extraction = None
    extractions.world.faults.fail("extractions.release")

    answer = extractions.extract()

    assert answer.status == "failed" and extractions.claims.held(command())["lease_until"] > 0  # left to expire


def test_a_fact_over_the_days_quota_fails_and_the_earlier_ones_stay() -> None:
    extractions = Extractions(quota=Quota(chars=1_000_000, notes_per_day=1))

    answer = extractions.extract()

    assert (
        answer.status == "failed"
        and answer.reason is not None
        and answer.reason.startswith("quota_exceeded: this memory has written its 1 notes for today")
    )
    assert extractions.texts() == [OSAKA]
