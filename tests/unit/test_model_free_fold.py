"""The fold without a model (``consolidation.folding.bullets``): one bullet for each set of near-identical
notes, in the newest note's wording and day, citing every note of the set; near-identical as ``remember``
flags ``similar`` (``search.near_duplicates``): the same terms, or contained terms and a cosine of 0.9."""

from __future__ import annotations

from agent_memory.consolidation.folding import bullets, propose
from agent_memory.domain.document import Document
from agent_memory.domain.fold import DueNote
from agent_memory.search.vectors import encode

TAG = 7


def due(day: str, position: int, text: str, vector: list[float] | None = None, tag: int = TAG) -> DueNote:
    stored = encode(vector, tag=tag) if vector is not None else None
    return DueNote("u#u-1", f"note#{day}#{position}", day, position, text, f"{day}T09:00:00Z", stored)


def test_notes_with_the_same_terms_make_one_bullet_in_the_newest_wording_citing_them_all() -> None:
    notes = [
        due("2026-11-20", 1, "Prefers metric units"),
        due("2026-11-20", 2, "Likes green tea"),
        due("2026-11-21", 1, "prefers the metric units."),
    ]

    proposal = propose(None, Document("# Memory", 1, None), notes)

    assert (
        proposal.content
        == "# Memory\n\n## Notes\n- [2026-11-20] Likes green tea\n- [2026-11-21] prefers the metric units."
    )
    assert [edit["notes"] for edit in proposal.edits or []] == [["2026-11-20.2"], ["2026-11-20.1", "2026-11-21.1"]]


def test_contained_terms_join_only_with_a_cosine_of_at_least_0_9_between_the_stored_vectors() -> None:
    near, far = [1.0, 0.2, 0.0], [1.0, 0.0, 2.0]  # cosines with [1, 0, 0]: 0.98 and 0.45
    notes = [
        due("2026-11-20", 1, "Plays squash", [1.0, 0.0, 0.0]),
        due("2026-11-20", 2, "Plays squash every Monday", near),
        due("2026-11-20", 3, "Drinks coffee", [0.0, 1.0, 0.0]),
        due("2026-11-21", 1, "Drinks coffee with oat milk", far),
    ]

    assert bullets(notes, TAG) == [
        (["2026-11-20.1", "2026-11-20.2"], "2026-11-20", "Plays squash every Monday"),
        (["2026-11-20.3"], "2026-11-20", "Drinks coffee"),
        (["2026-11-21.1"], "2026-11-21", "Drinks coffee with oat milk"),
    ]


def test_without_vectors_of_the_tag_only_the_same_terms_join_and_a_changed_fact_never_does() -> None:
    notes = [
        due("2026-11-20", 1, "Plays squash", [1.0, 0.0], tag=99),  # another model's vector: not compared
        due("2026-11-20", 2, "Plays squash every Monday", [1.0, 0.0], tag=99),
        due("2026-11-20", 3, "The billing meeting moved to Monday", [0.0, 1.0]),
        due("2026-11-21", 1, "The billing meeting moved to Tuesday", [0.0, 1.0]),  # cosine 1, terms changed
    ]

    assert [cited for cited, _, _ in bullets(notes, TAG)] == [
        ["2026-11-20.1"],
        ["2026-11-20.2"],
        ["2026-11-20.3"],
        ["2026-11-21.1"],
    ]
