"""Reindex and the drift check on a real node, reading notes from the table (moto) written by the real service."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.domain.notes import Note, Origin
from agent_memory.providers.notes_index import document_id
from local import reindex
from tests.support.fake_embeddings import FakeEmbeddingModel, fake_vector
from tests.support.scopes import private, shared, stored

pytestmark = pytest.mark.slow


def _remember(call, text, context=None):
    return call("remember", {"context": context or private(), "arguments": {"text": text}}).body["note"]


def _cli(notes_index, *arguments):
    return reindex.main(list(arguments), index=notes_index)


def test_a_scope_missing_from_the_index_is_drift_and_reindex_repairs_it(call, notes_index, capsys):
    for text in ("likes green tea", "deploys on fridays", "reads the kubernetes docs"):
        _remember(call, text)
    _remember(call, "team tea", shared("w-a"))
    capsys.readouterr()  # the service's own logs

    assert _cli(notes_index, "--scope", "user#u-1", "--scope", "ws#w-a", "--check") == 1
    assert capsys.readouterr().out.splitlines() == [
        "user#u-1\ttable=3\tindex=0\tDRIFT",
        "ws#w-a\ttable=1\tindex=0\tDRIFT",
    ]

    assert _cli(notes_index, "--scope", "user#u-1") == 0
    assert capsys.readouterr().out == "user#u-1\twritten=3\tremoved=0\n"

    assert _cli(notes_index, "--scope", "user#u-1", "--scope", "ws#w-a", "--check") == 1
    assert capsys.readouterr().out.splitlines() == [
        "user#u-1\ttable=3\tindex=3\tok",
        "ws#w-a\ttable=1\tindex=0\tDRIFT",
    ]
    assert [h.position for h in notes_index.keyword("user#u-1", "tea", k=8).hits] == [1]
    assert notes_index.keyword("ws#w-a", "tea", k=8).hits == []  # only the named scope was written


def test_reindex_removes_documents_of_notes_the_table_no_longer_holds(call, notes_index, capsys):
    _remember(call, "likes green tea")
    assert _cli(notes_index, "--scope", "user#u-1") == 0
    ghost = Note(
        "2026-11-01",
        7,
        "a note deleted while the indexer was down",
        "2026-11-01T08:00:00.000Z",
        "remember",
        Origin("u-1", "t-1"),
    )
    notes_index.put_many("user#u-1", [ghost])
    notes_index.put_many("user#u-2", [ghost])  # another scope's document is not touched
    assert _cli(notes_index, "--scope", "user#u-1", "--check") == 1
    capsys.readouterr()

    assert _cli(notes_index, "--scope", "user#u-1") == 0

    assert capsys.readouterr().out == "user#u-1\twritten=1\tremoved=1\n"
    assert notes_index.note_ids("user#u-1") == {"2026-12-03.1"}
    assert notes_index.note_ids("user#u-2") == {"2026-11-01.7"}
    assert _cli(notes_index, "--scope", "user#u-1", "--check") == 0


def test_reindex_carries_the_tables_consolidated_flag(call, aws, notes_index, opensearch_client):
    note = _remember(call, "likes green tea")
    notes_index.put_many(
        "user#u-1",
        [Note(note["day"], note["position"], "stale text", note["created_at"], "remember", Origin("u-1", "t-1"))],
    )
    aws.update_item(
        TableName="MemoryTable",
        Key={"pk": {"S": "user#u-1"}, "sk": {"S": f"note#{note['day']}#{note['position']:09d}"}},
        UpdateExpression="SET consolidated = :yes REMOVE uc_pk, uc_sk",
        ExpressionAttributeValues={":yes": {"BOOL": True}},
    )

    assert _cli(notes_index, "--scope", "user#u-1") == 0

    stored = opensearch_client.get(index=notes_index._alias, id=document_id("user#u-1", note["id"]), routing="user#u-1")
    assert stored["_source"]["consolidated"] is True
    assert stored["_source"]["text"] == "likes green tea"


def test_reindex_pages_through_a_scope_bigger_than_one_bulk_and_one_search_page(aws, notes_index):
    from agent_memory.domain.scope import Scope
    from agent_memory.recall.reindex import Reindexer
    from agent_memory.storage.note_store import NoteStore

    notes = NoteStore(aws, "MemoryTable")
    scope = Scope("personal", "u-1")
    for number in range(23):
        notes.append(
            scope,
            created=datetime(2026, 12, 1, 8, tzinfo=UTC),
            text=stored(f"note {number}"),
            source="remember",
            origin=Origin("u-1", "t-1"),
        )
    reindexer = Reindexer(notes, notes_index, bulk_size=5)

    assert reindexer.reindex(scope).written == 23
    assert len(notes_index.note_ids("user#u-1", page_size=4)) == 23
    assert not reindexer.check(scope).drifted


def test_a_note_written_after_the_query_began_is_not_removed(aws, notes_index):
    """The index holds a note the reindex did not read (the indexer wrote it meanwhile): the table still has it."""
    from agent_memory.domain.scope import Scope
    from agent_memory.recall.reindex import Reindexer
    from agent_memory.storage.note_store import NoteStore

    notes = NoteStore(aws, "MemoryTable")
    scope = Scope("personal", "u-1")
    for text in ("first", "written while the reindex ran"):
        written = notes.append(
            scope,
            created=datetime(2026, 12, 3, 10, tzinfo=UTC),
            text=stored(text),
            source="remember",
            origin=Origin("u-1", "t-1"),
        )
        notes_index.put_many(scope.key, [written])
    read_before_the_second = list(notes.every_note(scope))[:1]
    notes.every_note = lambda _scope: iter(read_before_the_second)  # type: ignore[method-assign]

    done = Reindexer(notes, notes_index).reindex(scope)

    assert (done.written, done.removed) == (1, 0)
    assert notes_index.note_ids(scope.key) == {"2026-12-03.1", "2026-12-03.2"}


def test_reindex_fills_in_the_vectors_the_check_reports_missing(call, notes_index, capsys):
    for text in ("adopted a kitten", "deploys on fridays"):
        _remember(call, text)
    assert _cli(notes_index, "--scope", "user#u-1") == 0  # no embedding model: written without vectors
    embedder = FakeEmbeddingModel()
    capsys.readouterr()

    assert reindex.main(["--scope", "user#u-1", "--check"], index=notes_index, embedder=embedder) == 1
    assert capsys.readouterr().out == "user#u-1\ttable=2\tindex=2\twithout_vector=2\tDRIFT\n"

    assert reindex.main(["--scope", "user#u-1"], index=notes_index, embedder=embedder) == 0
    assert embedder.calls == [["adopted a kitten", "deploys on fridays"]]  # one call per bulk
    assert reindex.main(["--scope", "user#u-1", "--check"], index=notes_index, embedder=embedder) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "user#u-1\ttable=2\tindex=2\twithout_vector=0\tok"
    _, semantic = notes_index.hybrid("user#u-1", "feline", fake_vector("feline"), size=1)
    assert [h.position for h in semantic] == [1]
