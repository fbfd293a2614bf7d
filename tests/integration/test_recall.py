"""docs/api.md §3 ``recall`` through ToolsFunction on moto: the keyword path (no OpenSearch, no embeddings)."""

from __future__ import annotations

import dataclasses

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.storage.note_store import NoteStore
from tests.support.scopes import private, shared, stored


def _remember(call, text, context=None):
    answer = call("remember", {"context": context or private(), "arguments": {"text": text}})
    assert answer.status == 201
    return answer.body["note"]


def _recall(call, arguments, context=None):
    return call("recall", {"context": context or private(), "arguments": arguments})


def test_the_answer_is_notes_with_scores_best_first_and_the_mode(call):
    tea = _remember(call, "Drinks green tea every morning")
    _remember(call, "Drives a blue car")

    answer = _recall(call, {"query": "TEA"})

    assert answer.status == 200
    assert answer.body["mode"] == "keyword"
    [hit] = answer.body["notes"]
    score = hit.pop("score")
    assert hit == tea
    assert isinstance(score, float) and score > 0


def test_the_event_in_events_is_a_valid_recall(call):
    _remember(call, "Prefers metric units and ISO dates")

    answer = call("recall")

    assert answer.status == 200
    assert [n["text"] for n in answer.body["notes"]] == ["Prefers metric units and ISO dates"]


def test_notes_holding_any_query_word_match_case_insensitively(call):
    for text in ("Likes TEA", "owns a Car", "reads books", "tea and car both"):
        _remember(call, text)

    texts = [n["text"] for n in _recall(call, {"query": "car Tea"}).body["notes"]]

    assert texts[0] == "tea and car both"
    assert sorted(texts) == sorted(["Likes TEA", "owns a Car", "tea and car both"])


def test_the_note_with_more_of_the_distinctive_words_ranks_first(call):
    _remember(call, "The team deploys the billing service every Tuesday")
    _remember(call, "The team deploys the kubernetes cluster every Friday")
    for filler in ("The team likes pizza", "The team meets on Monday", "The team uses Python"):
        _remember(call, filler)

    notes = _recall(call, {"query": "when do we deploy the kubernetes cluster?"}).body["notes"]

    assert notes[0]["text"] == "The team deploys the kubernetes cluster every Friday"
    assert [n["score"] for n in notes] == sorted((n["score"] for n in notes), reverse=True)


def test_k_bounds_the_answer_and_defaults_to_8(call):
    for i in range(12):
        _remember(call, f"fact {i} about tea")

    assert len(_recall(call, {"query": "tea"}).body["notes"]) == 8
    assert len(_recall(call, {"query": "tea", "k": 3}).body["notes"]) == 3
    assert len(_recall(call, {"query": "tea", "k": 20}).body["notes"]) == 12


def test_equal_scores_come_newest_first(call):
    for place in ("home", "work", "noon"):
        _remember(call, f"likes tea at {place}")

    notes = _recall(call, {"query": "tea"}).body["notes"]

    assert [n["position"] for n in notes] == [3, 2, 1]


def test_a_repeated_note_takes_one_slot_the_newest(call):
    """Given a fact written three times (in words that clean to the same terms) and a second fact,
    recall answers the fact once, as its newest note, and the second fact beside it."""
    for text in ("Likes green tea.", "likes GREEN tea", "- Likes the green tea"):
        _remember(call, text)
    other = _remember(call, "Buys tea leaves in Porto")

    notes = _recall(call, {"query": "green tea"}).body["notes"]

    assert [(n["position"], n["text"]) for n in notes] == [(3, "Likes the green tea"), (4, other["text"])]


def test_nothing_matches_is_an_empty_list(call):
    _remember(call, "likes tea")

    answer = _recall(call, {"query": "coffee"})

    assert (answer.status, answer.body) == (200, {"notes": [], "mode": "keyword"})


def test_an_empty_scope_is_an_empty_list(call):
    assert _recall(call, {"query": "tea"}).body == {"notes": [], "mode": "keyword"}


def test_the_same_words_in_another_scope_never_come_back(call):
    _remember(call, "secret plan alpha", private("u-2"))
    _remember(call, "secret plan alpha", shared("w-b"))
    _remember(call, "secret plan alpha", shared("w-a"))
    mine = _remember(call, "plan for the week", private("u-1"))

    personal = _recall(call, {"query": "secret plan alpha"}, private("u-1")).body["notes"]
    team = _recall(call, {"query": "secret plan alpha"}, shared("w-a", user="u-9")).body["notes"]

    assert [n["id"] for n in personal] == [mine["id"]]
    assert [n["text"] for n in team] == ["secret plan alpha"]
    assert team[0]["origin"]["user_id"] == "u-1"


def test_a_private_conversation_never_recalls_team_notes_of_its_workspace(call):
    _remember(call, "team deadline is friday", shared("w-a"))

    assert _recall(call, {"query": "deadline"}, private("u-1", workspace_id="w-a")).body["notes"] == []


class LeakyNotes(NoteStore):
    """A fake of recall's note store (``Services.recall_notes``) whose reads add u-2's notes to the scope's:
    ``newest_texts`` always, ``get_many`` once ``leaks_whole_notes``."""

    leaks_whole_notes = False

    def newest_texts(self, scope, *, limit, **options):
        return super().newest_texts(scope, limit=limit, **options) + super().newest_texts(
            Scope("personal", "u-2"), limit=limit, **options
        )

    def get_many(self, scope, wanted):
        found = super().get_many(scope, wanted)
        if not self.leaks_whole_notes:
            return found
        return found + super().get_many(Scope("personal", "u-2"), [("2026-12-03", 1)])


def test_rows_of_another_scope_from_the_store_are_dropped(call, aws):
    """Fail closed: even if the read returned a foreign note, it is never answered."""
    _remember(call, "likes tea")
    _remember(call, "also likes tea", private("u-2"))
    notes = LeakyNotes(aws, "MemoryTable")
    bootstrap.provide(recall_notes=notes)

    assert [n["text"] for n in _recall(call, {"query": "tea"}).body["notes"]] == ["likes tea"]

    notes.leaks_whole_notes = True
    assert [n["text"] for n in _recall(call, {"query": "tea"}).body["notes"]] == ["likes tea"]


def test_the_read_is_bounded_to_the_newest_notes(call):
    for i in range(8):
        _remember(call, f"tea note {i}")
    recall_service = bootstrap.services().recall_service
    bootstrap.provide(recall_service=dataclasses.replace(recall_service, keyword_max_notes=5))

    notes = _recall(call, {"query": "tea", "k": 20}).body["notes"]

    assert sorted(n["position"] for n in notes) == [4, 5, 6, 7, 8]


class _RecordingClient:
    """The moto client, with a record of the requests, and Query pages of 3 as if 1 MB were full."""

    def __init__(self, aws, *, unprocessed_rounds=0):
        self._aws = aws
        self.requests = []
        self._unprocessed_rounds = unprocessed_rounds

    def __getattr__(self, name):
        return getattr(self._aws, name)

    def query(self, **kwargs):
        self.requests.append(("Query", kwargs["Limit"], kwargs.get("ProjectionExpression")))
        return self._aws.query(**{**kwargs, "Limit": min(kwargs["Limit"], 3)})

    def batch_get_item(self, RequestItems):
        self.requests.append(("BatchGetItem", len(RequestItems["MemoryTable"]["Keys"]), None))
        if self._unprocessed_rounds:
            self._unprocessed_rounds -= 1
            return {"Responses": {}, "UnprocessedKeys": RequestItems}
        return self._aws.batch_get_item(RequestItems=RequestItems)


def _store_with_notes(client, count):
    from datetime import UTC, datetime

    from agent_memory.domain.notes import Origin
    from agent_memory.domain.scope import Scope
    from agent_memory.storage.note_store import NoteStore

    store = NoteStore(client, "MemoryTable")
    scope = Scope("personal", "u-1")
    for i in range(count):
        store.append(
            scope,
            created=datetime(2026, 12, 3, 10, tzinfo=UTC),
            text=stored(f"n{i}"),
            source="remember",
            origin=Origin("u", "t"),
        )
    return store, scope


def test_pages_are_followed_until_the_bound_and_only_texts_are_read(aws):
    client = _RecordingClient(aws)
    store, scope = _store_with_notes(client, 10)

    rows = store.newest_texts(scope, limit=7)

    assert [(row.day, row.position, row.text) for row in rows][:2] == [
        ("2026-12-03", 10, "n9"),
        ("2026-12-03", 9, "n8"),
    ]
    assert [row.position for row in rows] == [10, 9, 8, 7, 6, 5, 4]
    assert client.requests == [
        ("Query", 7, "pk, sk, #text"),
        ("Query", 4, "pk, sk, #text"),
        ("Query", 1, "pk, sk, #text"),
    ]
    assert store.newest_texts(scope, limit=50)[-1].position == 1


def test_whole_notes_come_in_the_order_asked_and_deleted_ones_are_skipped(aws):
    client = _RecordingClient(aws)
    store, scope = _store_with_notes(client, 4)
    aws.delete_item(TableName="MemoryTable", Key={"pk": {"S": "user#u-1"}, "sk": {"S": "note#2026-12-03#000000002"}})

    notes = store.get_many(scope, [("2026-12-03", 3), ("2026-12-03", 2), ("2026-12-03", 1)])

    assert [(k.pk, k.note.text) for k in notes] == [("user#u-1", "n2"), ("user#u-1", "n0")]
    assert store.get_many(scope, []) == []


def test_unprocessed_keys_are_asked_again_then_503(aws):
    from agent_memory.basics.errors import StorageUnavailable

    store, scope = _store_with_notes(_RecordingClient(aws, unprocessed_rounds=2), 2)
    assert [k.note.position for k in store.get_many(scope, [("2026-12-03", 2)])] == [2]

    store, scope = _store_with_notes(_RecordingClient(aws, unprocessed_rounds=9), 0)
    with pytest.raises(StorageUnavailable):
        store.get_many(scope, [("2026-12-03", 2)])


@pytest.mark.parametrize("query", ["", " ", "\n\t  "])
def test_a_blank_query_is_422(call, query):
    answer = _recall(call, {"query": query})

    assert answer.status == 422
    assert answer.body["details"][0]["loc"] == ["arguments", "query"]


def test_a_missing_query_is_422(call):
    answer = _recall(call, {"k": 3})

    assert answer.status == 422
    assert answer.body["details"][0]["loc"] == ["arguments", "query"]


@pytest.mark.parametrize("k", [0, -1, 21, 100, "5", 2.0, True, None])
def test_k_outside_1_to_20_or_not_an_integer_is_422(call, k):
    answer = _recall(call, {"query": "tea", "k": k})

    assert answer.status == 422
    assert answer.body["details"][0]["loc"][:2] == ["arguments", "k"]


@pytest.mark.parametrize("k", [1, 20])
def test_k_at_the_bounds_is_accepted(call, k):
    assert _recall(call, {"query": "tea", "k": k}).status == 200


@pytest.mark.parametrize("smuggled", ["user_id", "workspace_id", "scope", "visibility", "mode"])
def test_unknown_argument_keys_are_422(call, smuggled):
    _remember(call, "tea", shared("w-b"))

    answer = _recall(call, {"query": "tea", smuggled: "w-b"}, shared("w-a"))

    assert answer.status == 422
    assert answer.body["details"][0]["loc"] == ["arguments", smuggled]


def test_someone_elses_private_thread_is_403(call):
    _remember(call, "likes tea", private("u-2"))

    answer = _recall(call, {"query": "tea"}, private("u-1", thread_owner_id="u-2"))

    assert answer.status == 403


def test_shared_without_workspace_is_422(call):
    answer = _recall(call, {"query": "tea"}, {"user_id": "u-1", "thread_id": "t-1", "visibility": "shared"})

    assert answer.status == 422
    assert answer.body["details"][0]["loc"] == ["context", "workspace_id"]


def test_a_throttled_read_is_503_in_the_error_shape(call, aws, monkeypatch):
    from botocore.exceptions import ClientError

    from agent_memory import bootstrap

    class ThrottledClient:
        def query(self, **_):
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "Query")

    bootstrap.provide(make_dynamodb_client=lambda settings, **_: ThrottledClient())

    answer = _recall(call, {"query": "tea"})

    assert answer.status == 503
    assert answer.body["error"]["code"] == "storage_unavailable"
