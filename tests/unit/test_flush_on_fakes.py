"""The flush (docs/api.md §4 ``FlushFunction``) on the in-memory fakes (tests/support/fake_flush.py): one note per
compaction event, within its budget, never an exception; a failure writes nothing and gives the claim back; a lost
answer is answered as the table settled it. The stores' own behaviours are the contract tests'
(tests/support/flush_contracts.py); these are the use case's, each in milliseconds."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.basics.errors import InvalidInput, MemoryServiceError
from agent_memory.domain.commands import FlushCommand
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.edges.events import flush_command
from agent_memory.memory.flush import FLUSH_NOTE_MAX_CHARS, WRITE_RESERVE_S, FlushService
from agent_memory.storage.flush_store import CLAIM_TTL_S, LEASE_S
from agent_memory.storage.keys import legacy_flush_sk
from agent_memory.storage.usage_store import Quota
from tests.support.fake_flush import FakeFlushNoteStore, FakeFlushStore
from tests.support.fake_stores import SENDS, SETTLE_ATTEMPTS, FakeDocumentStore, FakeStores, FakeWorld, Write
from tests.support.fakes import FakeChatModel
from tests.support.models import ScriptedChatModels
from tests.support.scopes import PERSONAL, TEAM, stored
from tests.support.secrets_samples import SAMPLES
from tests.support.seeds import world_seed

SUMMARY = "Planning the billing-service migration; open: payments sign-off from Dana, rollback plan draft."
DAY = "2026-12-03"  # MEMORY_NOW's day
MESSAGES = (
    ("user", "Can you help me plan the Q1 migration of the billing service to the new cluster?"),
    ("assistant", "Sure. We need a cutover date and sign-off from the payments team. Which week suits you?"),
    ("user", "Probably the week of January 12. I still need to ask Dana about the payments sign-off."),
)


def command(
    scope: Scope = TEAM, *, user: str = "u-1", thread: str = "t-9", compaction_id: str = "cmp-1", messages=MESSAGES
) -> FlushCommand:
    return FlushCommand(scope=scope, origin=Origin(user, thread, compaction_id), messages=tuple(messages))


@dataclass
class Flushes:
    """One world, the flush's fake stores on it, and the model the flush asks (``scripted.flush``)."""

    quota: Quota | None = None
    world: FakeWorld = field(default_factory=FakeWorld)
    scripted: ScriptedChatModels = field(default_factory=ScriptedChatModels)

    def __post_init__(self) -> None:
        self.notes = FakeFlushNoteStore(self.world, self.quota)
        self.claims = FakeFlushStore(self.world)
        self.scripted.flush = FakeChatModel(reply=lambda system, prompt: SUMMARY)

    @property
    def model(self) -> FakeChatModel:
        model = self.scripted.flush
        assert isinstance(model, FakeChatModel)
        return model

    def service(self, **options: Any) -> FlushService:
        options.setdefault("enabled", True)
        return FlushService(self.notes, self.claims, lambda: self.scripted("flush"), **options)

    def flush(self, one: FlushCommand | None = None, **options: Any) -> dict[str, Any]:
        return self.service(**options).flush(one or command())

    def texts(self, scope: Scope = TEAM) -> list[str]:
        return [note.text for note in self.notes.every_note(scope)]

    def claim_of(self, thread: str = "t-9", compaction_id: str = "cmp-1", scope: Scope = TEAM) -> Any:
        return self.claims.held(scope, thread, compaction_id)


@pytest.fixture
def flushes() -> Flushes:
    return Flushes()


# --- written ----------------------------------------------------------------------------------------------


def test_the_note_is_the_models_summary_with_its_provenance(flushes: Flushes) -> None:
    answer = flushes.flush()

    assert answer["status"] == "written" and "model_free" not in answer
    note = answer["note"]
    assert (note["text"], note["source"], note["day"], note["position"]) == (SUMMARY, "flush", DAY, 1)
    assert note["origin"] == {"user_id": "u-1", "thread_id": "t-9", "compaction_id": "cmp-1"}
    assert flushes.texts() == [SUMMARY]
    ((system, prompt),) = flushes.model.calls
    assert "500 characters" in system and "open threads" in system
    assert "user: Can you help me plan the Q1 migration" in prompt


def test_the_claim_is_written_with_its_note_and_kept_30_days(flushes: Flushes) -> None:
    before = int(time.time())
    answer = flushes.flush()

    claim = flushes.claim_of()
    assert (claim["status"], claim["note_id"]) == ("written", answer["note"]["id"])
    assert "lease_until" not in claim
    assert before + CLAIM_TTL_S <= claim["expires_at"] <= int(time.time()) + CLAIM_TTL_S


def test_the_note_counts_against_the_day_and_the_characters(flushes: Flushes) -> None:
    flushes.flush()

    assert flushes.notes.usage.notes_on(TEAM, DAY) == 1
    assert flushes.notes.usage.chars(TEAM) == len(SUMMARY)


def test_a_second_call_for_the_same_event_is_a_duplicate_without_a_model_call(flushes: Flushes) -> None:
    first = flushes.flush()

    second = flushes.flush()

    assert second == {"status": "duplicate", "note": first["note"]}
    assert len(flushes.model.calls) == 1 and flushes.texts() == [SUMMARY]


def test_the_same_compaction_id_in_another_scope_is_another_event(flushes: Flushes) -> None:
    assert flushes.flush(command(TEAM))["status"] == "written"
    assert flushes.flush(command(PERSONAL))["status"] == "written"

    assert flushes.texts(TEAM) == flushes.texts(PERSONAL) == [SUMMARY]


def test_the_same_compaction_id_from_another_thread_is_another_event(flushes: Flushes) -> None:
    flushes.model.reply = lambda system, prompt: "alice's summary" if "alice" in prompt else "bob's summary"
    alice = command(user="u-alice", thread="t-alice", messages=[("user", "alice here: the plan")])
    bob = command(user="u-bob", thread="t-bob", messages=[("user", "bob here: the plan")])

    answers = [flushes.flush(alice), flushes.flush(bob), flushes.flush(bob)]

    assert [answer["status"] for answer in answers] == ["written", "written", "duplicate"]
    assert answers[2]["note"] == answers[1]["note"] and answers[1]["note"]["text"] == "bob's summary"
    assert sorted(flushes.texts()) == ["alice's summary", "bob's summary"]


def test_a_long_answer_is_capped_at_500_characters(flushes: Flushes) -> None:
    flushes.model.reply = lambda system, prompt: "- " + "word " * 300

    note = flushes.flush()["note"]

    assert len(note["text"]) <= FLUSH_NOTE_MAX_CHARS and note["text"].startswith("word word")


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_a_secret_in_the_models_summary_is_redacted_before_it_is_stored(flushes: Flushes, kind: str) -> None:
    text, secret = SAMPLES[kind]
    flushes.model.reply = lambda system, prompt: text

    answer = flushes.flush(redact_extra=frozenset({"email", "phone"}))

    assert answer["status"] == "written"
    assert f"[redacted: {kind}]" in answer["note"]["text"]
    assert secret not in repr(flushes.world.between(TEAM.key, "", "\uffff"))


def test_the_note_shows_up_in_the_next_turns_context(flushes: Flushes) -> None:
    memory = FakeStores(flushes.world, flushes.notes, FakeDocumentStore(flushes.world)).memory_service()

    flushes.flush()

    assert [note.text for note in memory.context(TEAM).recent_notes] == [SUMMARY]


def test_a_remembered_note_and_the_flush_note_share_the_days_positions(flushes: Flushes) -> None:
    memory = FakeStores(flushes.world, flushes.notes, FakeDocumentStore(flushes.world)).memory_service()
    flushes.notes.append(
        TEAM,
        created=datetime(2026, 12, 3, 9, tzinfo=UTC),
        text=stored("a fact"),
        source="remember",
        origin=Origin("u-1", "t-9"),
    )

    answer = flushes.flush()

    assert answer["note"]["position"] == 2
    assert [note.text for note in memory.context(TEAM).recent_notes] == [SUMMARY, "a fact"]


# --- without a model ----------------------------------------------------------------------------------------


def test_without_a_model_the_extractive_branch_writes_the_conversations_own_sentences(flushes: Flushes) -> None:
    flushes.scripted.flush = None

    answer = flushes.flush(extractive=True)

    assert (answer["status"], answer["model_free"]) == ("written", True)
    assert "January 12" in answer["note"]["text"] and "Dana" in answer["note"]["text"]
    assert len(answer["note"]["text"]) <= FLUSH_NOTE_MAX_CHARS and flushes.texts() == [answer["note"]["text"]]


@pytest.mark.parametrize("filler", [150, 170, 190])
def test_the_extractive_branch_redacts_a_secret_before_a_sentence_is_cut(flushes: Flushes, filler: int) -> None:
    """The summary cuts a long sentence; a cut through a secret would leave a piece that no detector knows."""
    flushes.scripted.flush = None
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    long = "We decided on 12 January to deploy with " + "x" * filler + " " + token + " as the deploy token."

    answer = flushes.flush(command(messages=[("user", long)]), extractive=True)

    assert answer["status"] == "written"
    assert "ghp_" not in answer["note"]["text"] and token[8:20] not in answer["note"]["text"]


def test_a_model_when_there_is_one_is_asked_even_with_the_extractive_branch(flushes: Flushes) -> None:
    answer = flushes.flush(extractive=True)

    assert answer["note"]["text"] == SUMMARY and "model_free" not in answer


def test_no_model_and_no_extractive_branch_is_failed_and_the_claim_given_back(flushes: Flushes) -> None:
    flushes.scripted.flush = None

    answer = flushes.flush()

    assert (answer["status"], answer["note"]) == ("failed", None)
    assert "MEMORY_CHAT_MODEL" in answer["reason"]
    assert flushes.claim_of() is None and flushes.texts() == []


# --- disabled, refused --------------------------------------------------------------------------------------


def test_a_disabled_flush_reads_and_writes_nothing(flushes: Flushes) -> None:
    answer = flushes.flush(enabled=False)

    assert answer == {"status": "disabled", "note": None}
    assert flushes.model.calls == [] and flushes.world.faults.seen == []


def test_a_refused_event_is_failed_with_its_refusal_or_disabled_when_off(flushes: Flushes) -> None:
    refusal = InvalidInput("`compaction_id` is required")

    assert flushes.service().refused(refusal) == {
        "status": "failed",
        "note": None,
        "reason": "invalid_input: `compaction_id` is required",
    }
    assert flushes.service(enabled=False).refused(refusal) == {"status": "disabled", "note": None}
    assert flushes.world.faults.seen == []


EVENT = {
    "context": {"user_id": "u-1", "thread_id": "t-9", "visibility": "shared", "workspace_id": "w-3"},
    "compaction_id": "cmp-1",
    "messages": [{"role": "user", "content": "Let's plan the Lisbon trip"}],
}


@pytest.mark.parametrize(
    "event",
    [
        None,
        [],
        {**EVENT, "messages": []},
        {**EVENT, "compaction_id": "has space"},
        {**EVENT, "extra": 1},
        {**EVENT, "context": {**EVENT["context"], "thread_owner_id": "u-2", "visibility": "private"}},
    ],
)
def test_an_event_its_adapter_refuses_is_failed_with_the_refusal_and_touches_nothing(flushes: Flushes, event) -> None:
    """What FlushFunction's handler does: adapt the event, then flush it, or answer the adapter's refusal."""
    service = flushes.service()
    try:
        answer = service.flush(flush_command(event))
    except MemoryServiceError as refusal:
        answer = service.refused(refusal)

    assert (answer["status"], answer["note"]) == ("failed", None)
    assert answer["reason"].split(":")[0] in ("invalid_input", "forbidden")
    assert flushes.model.calls == [] and flushes.world.faults.seen == []


def test_a_well_formed_event_through_its_adapter_is_written(flushes: Flushes) -> None:
    answer = flushes.service().flush(flush_command(EVENT))

    assert answer["status"] == "written" and answer["note"]["origin"]["compaction_id"] == "cmp-1"
    assert flushes.texts() == [SUMMARY]


# --- the model fails ---------------------------------------------------------------------------------------


def test_a_model_error_is_failed_and_a_retry_writes(flushes: Flushes) -> None:
    flushes.model.fail_with = "the chat model failed: ThrottlingException"

    failed = flushes.flush()
    flushes.model.fail_with = None
    retried = flushes.flush()

    assert (failed["status"], failed["reason"]) == ("failed", "the chat model failed: ThrottlingException")
    assert retried["status"] == "written" and flushes.texts() == [SUMMARY]


@pytest.mark.parametrize("reply", ["", "   ", "# A heading", "- ", "\x00\x01"])
def test_an_unusable_answer_is_failed_writes_nothing_and_gives_the_claim_back(flushes: Flushes, reply: str) -> None:
    flushes.model.reply = lambda system, prompt: reply

    answer = flushes.flush()

    assert (answer["status"], answer["note"]) == ("failed", None)
    assert flushes.texts() == [] and flushes.claim_of() is None
    assert flushes.notes.usage.notes_on(TEAM, DAY) == 0


@pytest.mark.parametrize(
    ("reply", "stored"),
    [
        ("# Summary\nDecided to ship on Friday.", "Decided to ship on Friday."),
        (
            "## Notes\n\n### Plan\nMaya owns the launch; open: who signs off?",
            "Maya owns the launch; open: who signs off?",
        ),
        ("#\nThe budget is capped at 40k.", "The budget is capped at 40k."),
    ],
)
def test_a_title_above_the_models_note_is_left_out(flushes: Flushes, reply: str, stored: str) -> None:
    """A model asked for one plain note may title it; the note is what follows (a heading alone is unusable, above)."""
    flushes.model.reply = lambda system, prompt: reply

    answer = flushes.flush()

    assert answer["status"] == "written" and flushes.texts() == [stored]


def test_a_model_slower_than_the_budget_is_failed_within_it(flushes: Flushes) -> None:
    flushes.model.delay_s = 2.0
    started = time.monotonic()

    answer = flushes.flush(budget_s=WRITE_RESERVE_S + 0.05)

    assert time.monotonic() - started < 0.5
    assert answer["status"] == "failed" and "did not answer within" in answer["reason"]
    assert flushes.texts() == [] and flushes.claim_of() is None
    flushes.model.abandon()


def test_a_budget_spent_before_the_model_is_asked_is_failed_without_a_model_call(flushes: Flushes) -> None:
    answer = flushes.flush(budget_s=WRITE_RESERVE_S / 2)

    assert answer["status"] == "failed" and "budget ran out" in answer["reason"]
    assert flushes.model.calls == [] and flushes.claim_of() is None


# --- claims held ----------------------------------------------------------------------------------------------


def test_an_event_another_flush_holds_is_a_duplicate_without_a_note_or_a_model_call(flushes: Flushes) -> None:
    flushes.claims.claim(TEAM, "t-9", "cmp-1", token="another", now_epoch=int(time.time()))

    answer = flushes.flush()

    assert answer == {
        "status": "duplicate",
        "note": None,
        "reason": "another invocation is flushing this compaction event",
    }
    assert flushes.model.calls == [] and flushes.claim_of()["token"] == "another"


def test_an_event_whose_holder_died_is_flushed_once_its_lease_ran_out(flushes: Flushes) -> None:
    flushes.claims.claim(TEAM, "t-9", "cmp-1", token="dead", now_epoch=int(time.time()) - LEASE_S - 5)

    answer = flushes.flush()

    assert answer["status"] == "written" and flushes.claim_of()["status"] == "written"


def _earlier(flushes: Flushes, **attributes: Any) -> None:
    """A claim of the shape written before claims named their thread."""
    now = int(time.time())
    record = {"token": "an-older-invocation", "expires_at": now + 3600, **attributes}
    world_seed(flushes.world)(TEAM, legacy_flush_sk("cmp-1"), record)


def test_an_earlier_flush_still_running_fails_this_one_and_writes_nothing(flushes: Flushes) -> None:
    _earlier(flushes, status="in_progress", lease_until=int(time.time()) + 10)

    answer = flushes.flush()

    assert answer["status"] == "failed" and "running" in answer["reason"]
    assert flushes.model.calls == [] and flushes.texts() == []
    assert flushes.claim_of() is None  # its own claim given back


def test_an_earlier_claim_written_from_this_thread_is_a_duplicate_of_its_note(flushes: Flushes) -> None:
    """A claim an older service wrote (no thread in its key) holds its own thread's event only: the thread is told
    by its note's."""
    first = flushes.flush()
    written = flushes.claim_of()
    world_seed(flushes.world)(TEAM, legacy_flush_sk("cmp-1"), written)  # moved to the shape of before
    flushes.world.transact("test", [Write((TEAM.key, "flush#t-9#cmp-1"), lambda _: None)])

    again = flushes.flush()
    other_thread = flushes.flush(command(user="u-2", thread="t-other"))

    assert again == {"status": "duplicate", "note": first["note"]}
    assert other_thread["status"] == "written" and other_thread["note"]["origin"]["thread_id"] == "t-other"
    assert len(flushes.model.calls) == 2 and flushes.texts() == [SUMMARY, SUMMARY]
    assert flushes.claim_of() is None  # this thread's new claim, given back after the duplicate


def test_a_duplicate_whose_note_cannot_be_read_answers_without_it(flushes: Flushes) -> None:
    flushes.flush()
    flushes.world.faults.fail("notes.get")

    answer = flushes.flush()

    assert answer == {"status": "duplicate", "note": None}


# --- storage faults and lost answers ---------------------------------------------------------------------------


def test_a_claim_that_fails_is_failed_without_a_model_call(flushes: Flushes) -> None:
    flushes.world.faults.fail("flushes.claim")

    answer = flushes.flush()

    assert answer["status"] == "failed" and answer["reason"].startswith("storage")
    assert flushes.model.calls == [] and flushes.texts() == []


def test_a_claim_whose_first_answer_was_lost_is_this_calls_own_and_writes(flushes: Flushes) -> None:
    flushes.world.faults.lose_answers("flushes.claim")

    first = flushes.flush()
    again = flushes.flush()  # the backend's own retry of the same compaction event

    assert first["status"] == "written"  # not "duplicate" of its own claim, with no note
    assert again["status"] == "duplicate" and again["note"]["id"] == first["note"]["id"]
    assert flushes.texts() == [SUMMARY]


def test_a_claim_whose_outcome_stayed_unknown_is_given_back_so_the_retry_writes(flushes: Flushes) -> None:
    """The claim applied, every answer lost: the flush answers failed and gives it back (else the retry heard
    "duplicate" with no note for the claim's lease, and the summary was lost)."""
    flushes.world.faults.lose_answers("flushes.claim", times=3)

    first = flushes.flush()
    again = flushes.flush()

    assert first["status"] == "failed" and len(flushes.model.calls) == 1  # the retry's: the first asked none
    assert again["status"] == "written" and flushes.texts() == [SUMMARY]


def test_a_note_write_that_fails_writes_nothing_and_the_retry_writes(flushes: Flushes) -> None:
    flushes.world.faults.fail("notes.append")

    failed = flushes.flush()
    retried = flushes.flush()

    assert failed["status"] == "failed" and "unavailable" in failed["reason"]
    assert retried["status"] == "written" and flushes.texts() == [SUMMARY]
    assert flushes.claim_of()["note_id"] == retried["note"]["id"]
    assert flushes.notes.usage.notes_on(TEAM, DAY) == 1  # the failed note's count given back by its settling


def test_a_note_write_whose_first_answer_was_lost_is_written_once(flushes: Flushes) -> None:
    flushes.world.faults.lose_answers("notes.append")

    answer = flushes.flush()

    assert answer["status"] == "written" and flushes.texts() == [SUMMARY]
    assert flushes.notes.usage.chars(TEAM) == len(SUMMARY)


def test_a_note_write_whose_every_answer_was_lost_is_found_at_its_place_and_answered(flushes: Flushes) -> None:
    flushes.world.faults.lose_answers("notes.append", times=3)

    answer = flushes.flush()

    assert answer["status"] == "written" and answer["note"]["id"] == f"{DAY}.1"
    assert flushes.texts() == [SUMMARY]


def test_a_note_written_whose_answers_were_lost_and_unreadable_is_answered_from_the_claim(flushes: Flushes) -> None:
    """Every answer of the note's transaction lost and the note unreadable: the release finds the claim written
    with this call's token, and the answer is the note this call wrote, not read back."""
    flushes.world.faults.lose_answers("notes.append", times=SENDS)
    flushes.world.faults.fail("notes.settle", times=SETTLE_ATTEMPTS * SENDS)  # the settling cannot tell either
    flushes.world.faults.fail("notes.read_back", times=2 * SETTLE_ATTEMPTS)

    answer = flushes.flush()

    assert answer["status"] == "written", answer
    (stored,) = flushes.notes.every_note(TEAM)
    note = answer["note"]
    assert (note["id"], note["text"], note["created_at"], note["source"]) == (
        stored.id,
        stored.text,
        stored.created_at,
        "flush",
    )
    assert note["origin"] == {"user_id": "u-1", "thread_id": "t-9", "compaction_id": "cmp-1"}


def test_a_release_that_fails_leaves_the_claim_to_its_lease(flushes: Flushes) -> None:
    flushes.model.fail_with = "the model is throttled"
    flushes.world.faults.fail("flushes.release")

    failed = flushes.flush()
    flushes.model.fail_with = None
    within_the_lease = flushes.flush()

    assert failed["status"] == "failed" and flushes.claim_of()["status"] == "in_progress"
    assert within_the_lease == {
        "status": "duplicate",
        "note": None,
        "reason": "another invocation is flushing this compaction event",
    }
    assert flushes.texts() == []


def test_an_earlier_claims_read_that_fails_is_failed_and_gives_the_claim_back(flushes: Flushes) -> None:
    flushes.world.faults.fail("flushes.earlier_claim")

    answer = flushes.flush()

    assert answer["status"] == "failed" and flushes.claim_of() is None and flushes.model.calls == []


# --- quotas ---------------------------------------------------------------------------------------------------


def test_a_flush_over_the_days_notes_fails_with_that_reason_and_writes_nothing() -> None:
    flushes = Flushes(quota=Quota(notes_per_day=1, chars=10_000))
    assert flushes.flush(command(compaction_id="cmp-0"))["status"] == "written"

    answer = flushes.flush()

    assert answer["status"] == "failed" and "quota_exceeded" in answer["reason"]
    assert flushes.texts() == [SUMMARY] and flushes.claim_of() is None


def test_a_flush_over_the_characters_quota_fails_and_counts_nothing() -> None:
    flushes = Flushes(quota=Quota(notes_per_day=10, chars=len(SUMMARY) + 5))
    assert flushes.flush(command(compaction_id="cmp-0"))["status"] == "written"

    answer = flushes.flush()

    assert answer["status"] == "failed" and "quota_exceeded" in answer["reason"]
    assert flushes.notes.usage.notes_on(TEAM, DAY) == 1 and flushes.notes.usage.chars(TEAM) == len(SUMMARY)
