"""``make run``'s stand-in for the indexer's event source mapping: moto's stream, the handler, a fake index."""

from __future__ import annotations

import re

import pytest

from agent_memory import bootstrap
from local.stream_mapping import LocalStreamMapping
from local.template import load_handler
from tests.support.fake_index import FakeNotesIndex
from tests.support.scopes import private


@pytest.fixture
def index(monkeypatch):
    fake = FakeNotesIndex()
    bootstrap.provide(notes_index=fake)
    return fake


@pytest.fixture
def mapping(aws, lambda_context):
    batches = []

    def _invoke(event):
        batches.append(len(event["Records"]))
        return load_handler("IndexerFunction")(event, lambda_context)

    mapping = LocalStreamMapping(None, _invoke)
    mapping.batches = batches
    return mapping


def _remember(call, text):
    return call("remember", {"context": private(), "arguments": {"text": text}}).body["note"]


def test_it_starts_at_the_end_of_the_stream_and_delivers_new_writes(call, aws, index, lambda_context):
    _remember(call, "written before the mapping existed")
    mapping = LocalStreamMapping(None, lambda event: load_handler("IndexerFunction")(event, lambda_context))
    _remember(call, "likes green tea")

    assert mapping.poll_once() == 4  # the day counter, the note, the characters counter and the scope's due marker
    assert [d["text"] for d in index.documents.values()] == ["likes green tea"]
    assert mapping.poll_once() == 0


def test_failed_records_are_delivered_again_from_the_first_failed_one(call, index, mapping):
    _remember(call, "first")
    _remember(call, "second")
    index.failing_writes = {"2026-12-03.2"}

    mapping.poll_once()
    assert [d["text"] for d in index.documents.values()] == ["first"]

    index.failing_writes = set()
    mapping.poll_once()
    assert [d["text"] for d in index.documents.values()] == ["first", "second"]
    assert mapping.poll_once() == 0


def test_it_gives_up_after_the_templates_retries(call, index, mapping, monkeypatch, capsys):
    _remember(call, "never indexable")
    index.failing_writes = {"2026-12-03.1"}

    for _ in range(12):
        mapping.poll_once()

    assert index.documents == {}
    # The note's record and what follows it in the batch: the characters counter (moto streams its update
    # twice), the scope's due marker and the marker's count; one more when the day's counter is streamed too.
    assert re.search(r"gave up on [5-9] stream records after 10 retries", capsys.readouterr().err)
    assert mapping.poll_once() == 0
