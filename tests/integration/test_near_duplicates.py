"""Near-duplicates (docs/api.md ``remember``'s ``similar``; recall and the context block show one note per
fact): through ToolsFunction on moto, on the keyword path and on the table's hybrid path (the named fake
embedding model: a text's vector is the normalised sum of its words' concepts)."""

from __future__ import annotations

from tests.support.scopes import private

LONG = "Drinks espresso with oat milk every morning"
LONGER = "Drinks espresso with oat milk every morning at home"  # one word more: cosine 0.93 with the fake


def _remember(call, text):
    answer = call("remember", {"context": private(), "arguments": {"text": text}})
    assert answer.status == 201
    return answer.body


def _notes(aws):
    return aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :n)",
        ExpressionAttributeValues={":p": {"S": "user#u-1"}, ":n": {"S": "note#"}},
    )["Items"]


def test_a_repeated_note_is_written_and_answers_the_notes_it_repeats(call, aws):
    first = _remember(call, "Prefers metric units.")
    second = _remember(call, "prefers the METRIC units")
    third = _remember(call, "- Prefers metric units")

    assert first["similar"] == []
    assert second["similar"] == [first["note"]["id"]]
    assert third["similar"] == [second["note"]["id"], first["note"]["id"]]  # newest first
    assert len(_notes(aws)) == 3  # append-only: every repeat is written


def test_a_note_that_adds_or_changes_a_word_is_not_similar_without_vectors(call):
    _remember(call, "Prefers metric units")

    assert _remember(call, "Prefers metric units and ISO dates")["similar"] == []
    assert _remember(call, "Prefers imperial units")["similar"] == []


def test_recall_and_the_context_block_show_a_repeated_fact_once_as_its_newest_note(call):
    _remember(call, "Prefers metric units.")
    _remember(call, "Allergic to peanuts")
    newest = _remember(call, "prefers metric UNITS")["note"]

    recalled = call("recall", {"context": private(), "arguments": {"query": "metric units"}}).body["notes"]
    context = call("context", {"context": private()}).body

    assert [note["id"] for note in recalled] == [newest["id"]]
    assert [note["text"] for note in context["recent_notes"]] == ["prefers metric UNITS", "Allergic to peanuts"]
    assert context["system_prompt"].count("metric") == 1


def test_with_vectors_a_close_rewording_that_only_adds_a_word_is_similar(call, embedder):
    first = _remember(call, LONG)

    assert _remember(call, LONGER)["similar"] == [first["note"]["id"]]


def test_without_vectors_the_same_rewording_is_a_new_fact(call):
    _remember(call, LONG)

    assert _remember(call, LONGER)["similar"] == []


def test_with_vectors_a_changed_word_is_never_similar_however_close(call, embedder):
    _remember(call, "The billing project meeting moved to Monday morning")

    assert _remember(call, "The billing project meeting moved to Tuesday morning")["similar"] == []


def test_with_vectors_recall_answers_the_close_rewording_once(call, embedder):
    _remember(call, LONG)
    newest = _remember(call, LONGER)["note"]
    tea = _remember(call, "Drinks green tea in the afternoon")["note"]

    answer = call("recall", {"context": private(), "arguments": {"query": "what does she drink?"}}).body

    assert answer["mode"] == "hybrid"
    assert sorted(note["id"] for note in answer["notes"]) == sorted([newest["id"], tea["id"]])
