"""The migration command's reading of each peer's export (client/agent_memory_client/migrate.py): the fixtures
are the shapes mem0's ``get_all``, Zep's ``graph.edge.get_by_user_id`` and AgentCore's ``ListMemoryRecords``
answer; each record becomes a ``notes/1`` note at its own instant, oldest first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_memory_client.errors import ServiceUnavailable
from agent_memory_client.migrate import NotAnExport, convert, migrate, pages

FIXTURES = Path(__file__).parents[1] / "fixtures" / "migrate"


def fixture(peer: str):
    return json.loads((FIXTURES / f"{peer}.json").read_text())


def test_mem0_memories_keep_their_created_at_with_its_offset():
    notes, left = convert("mem0", fixture("mem0"))

    assert [(n["text"][:24], n["created_at"], n["source"]) for n in notes] == [
        ("Is vegetarian and allerg", "2026-10-14T09:12:03.412345-07:00", "mem0"),
        ("Deploys the side project", "2026-11-02T18:40:00-07:00", "mem0"),
        ("Started learning Portugu", "2026-12-01T08:00:00-08:00", "mem0"),
    ]
    assert left == 0 and "author" not in notes[0]


def test_mem0_get_all_as_a_bare_list_reads_the_same():
    assert convert("mem0", fixture("mem0")["results"]) == convert("mem0", fixture("mem0"))


def test_zep_edges_leave_expired_facts_behind_and_take_an_author_for_a_team():
    notes, left = convert("zep", fixture("zep"), author="u-7")

    assert [(n["text"], n["created_at"], n["author"]) for n in notes] == [
        ("Alex works at Fabrikam as a data engineer", "2026-09-20T10:00:00+00:00", "u-7"),
        ("Alex types on a split Kinesis Advantage keyboard", "2026-11-29T16:30:00+00:00", "u-7"),
    ]
    assert left == 1  # "Alex lives in Porto": expired when Zep learned otherwise


def test_agentcore_records_take_an_iso_or_an_epoch_created_at_and_pages_of_them():
    page = fixture("agentcore")
    notes, left = convert("agentcore", page)
    both, _ = convert("agentcore", [page, page])

    assert [(n["text"][:20], n["created_at"]) for n in notes] == [
        ("The user prefers con", "2026-10-05T14:22:11.123000+00:00"),
        ("The user is planning", "2026-11-30T00:53:20+00:00"),
    ]
    assert left == 0 and len(both) == 4


@pytest.mark.parametrize(
    ("peer", "data"),
    [
        ("mem0", {"memories": []}),
        ("zep", {"results": [{"fact": "x", "created_at": "yesterday"}]}),
        ("agentcore", {"memoryRecordSummaries": [{"content": {"text": "x"}}]}),
        ("zep", ["not a record"]),
    ],
)
def test_another_shape_is_refused_with_what_was_expected(peer, data):
    with pytest.raises(NotAnExport):
        convert(peer, data)


def test_an_instant_without_an_offset_is_utc_and_a_large_export_goes_in_pages_of_500():
    notes, _ = convert("mem0", [{"memory": f"fact {n}", "created_at": "2026-10-01T09:00:00"} for n in range(1001)])

    assert notes[0]["created_at"] == "2026-10-01T09:00:00+00:00"
    assert [len(page) for page in pages(notes)] == [500, 500, 1]


class FakeAdminOutOfTimeOnce:
    """A fake ``MemoryClient.admin`` whose first import call of each page runs out of time (503
    ``import_unfinished``), as a page of 500 does on a slow table; the second answers the receipt."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def import_notes(self, notes, *, import_id, user=None, workspace=None):
        self.calls.append((import_id, len(notes)))
        if [call[0] for call in self.calls].count(import_id) == 1:
            raise ServiceUnavailable(503, "import_unfinished", "the import wrote 400 of its 500 notes")
        return {
            "notes": [{"index": n, "id": f"2026-10-01.{n + 1}"} for n in range(len(notes))],
            "skipped": [],
            "refused": [],
        }


def test_a_page_out_of_time_is_sent_again_under_its_id_and_the_next_page_gets_its_own():
    notes, _ = convert("mem0", [{"memory": f"fact {n}", "created_at": "2026-10-01T09:00:00Z"} for n in range(600)])
    admin, lines = FakeAdminOutOfTimeOnce(), []

    receipts = migrate(admin, notes, import_id="mem0-alex", user="u-1", report=lines.append)

    assert admin.calls == [("mem0-alex-1", 500), ("mem0-alex-1", 500), ("mem0-alex-2", 100), ("mem0-alex-2", 100)]
    assert [len(receipt["notes"]) for receipt in receipts] == [500, 100]
    assert lines[0].startswith("page 1: continuing") and lines[1].startswith("page 1: 500 written")
