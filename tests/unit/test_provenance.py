"""domain/provenance.py: which notes each line rests on after a fold's edits, and which notes the edits supersede."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.edits import Edited, apply
from agent_memory.domain.provenance import Followed, carried, follow, in_note_order
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import note_sk
from agent_memory.storage.note_items import superseded_items
from agent_memory.storage.version_save import supersession_within

PERSONAL = Scope("personal", "u-1")

BEFORE = "# Memory\n- lives in Lisbon\n- likes tea\n- Lisbon office on Fridays\n"
NOTES = [[], ["d.1"], ["d.2"], ["d.1", "d.3"], []]


def edited(edits: list[dict], document: str = BEFORE) -> Edited:
    result = apply(document, {"edits": edits}, [note for edit in edits for note in edit["notes"]])
    assert isinstance(result, Edited)
    return result


def test_kept_lines_keep_their_notes_and_written_lines_get_the_edits():
    result = edited([{"op": "add", "after": "- likes tea", "text": "- reads\n- runs", "notes": ["n.1"]}])

    followed = follow(BEFORE, NOTES, result.edits, result.content)

    assert followed.line_notes == [[], ["d.1"], ["d.2"], ["n.1"], ["n.1"], ["d.1", "d.3"], []]
    assert followed.superseded == {}


def test_a_replace_supersedes_only_the_notes_no_remaining_line_cites():
    result = edited(
        [{"op": "replace", "line": "- Lisbon office on Fridays", "text": "- Porto office", "notes": ["n.2"]}]
    )

    followed = follow(BEFORE, NOTES, result.edits, result.content)

    assert followed.superseded == {"d.3": ["n.2"]}  # d.1 still rests under "- lives in Lisbon"
    assert followed.line_notes[3] == ["n.2"]


def test_a_delete_supersedes_its_lines_notes_by_the_notes_it_cites():
    edits = [
        {"op": "delete", "line": "- lives in Lisbon", "notes": ["2026-12-01.10"]},
        {"op": "delete", "line": "- Lisbon office on Fridays", "notes": ["2026-12-01.9"]},
    ]
    result = edited(edits)

    followed = follow(BEFORE, NOTES, result.edits, result.content)

    assert followed.superseded == {"d.1": ["2026-12-01.9", "2026-12-01.10"], "d.3": ["2026-12-01.9"]}
    assert followed.line_notes == [[], ["d.2"], []]


def test_a_note_the_edit_cites_again_stays_current():
    result = edited([{"op": "replace", "line": "- likes tea", "text": "- likes green tea", "notes": ["d.2", "n.1"]}])

    assert follow(BEFORE, NOTES, result.edits, result.content).superseded == {}


def test_a_document_without_recorded_notes_supersedes_nothing():
    result = edited([{"op": "delete", "line": "- likes tea", "notes": ["n.1"]}])

    followed = follow(BEFORE, None, result.edits, result.content)

    assert followed.superseded == {} and followed.line_notes == [[], [], [], []]


def test_a_saved_document_of_other_lines_rests_on_no_note_but_still_supersedes():
    result = edited([{"op": "delete", "line": "- likes tea", "notes": ["n.1"]}])

    followed = follow(BEFORE, NOTES, result.edits, "# Memory\n- compressed")

    assert followed.line_notes == [[], []]
    assert followed.superseded == {"d.2": ["n.1"]}


def test_note_ids_are_ordered_by_day_then_position_as_a_number():
    assert in_note_order({"2026-12-01.10", "2026-12-01.9", "2026-11-30.20"}) == [
        "2026-11-30.20",
        "2026-12-01.9",
        "2026-12-01.10",
    ]


def test_a_note_both_superseded_and_superseding_is_one_transaction_item():
    items = superseded_items("T", PERSONAL, {"2026-12-01.1": ["2026-12-02.1"], "2026-12-02.1": ["2026-12-03.1"]})

    keys = [item["Update"]["Key"]["sk"]["S"] for item in items]
    assert len(keys) == len(set(keys)) == 3
    both = next(item["Update"] for item in items if item["Update"]["Key"]["sk"]["S"] == note_sk("2026-12-02", 1))
    assert both["UpdateExpression"] == "ADD #superseded_by :superseded_by, #supersedes :supersedes"
    assert both["ExpressionAttributeValues"] == {
        ":superseded_by": {"SS": ["2026-12-03.1"]},
        ":supersedes": {"SS": ["2026-12-01.1"]},
    }


def test_the_supersession_fits_the_transaction_oldest_notes_first():
    superseded = {f"2026-12-01.{n}": ["2026-12-09.1"] for n in range(1, 11)}

    kept = supersession_within(superseded, room=6)  # the superseding note's item, then five superseded notes

    assert list(kept) == [f"2026-12-01.{n}" for n in range(1, 6)]
    assert supersession_within(superseded, room=11) == superseded


@st.composite
def folds(draw: st.DrawFn) -> tuple[str, list[list[str]], list[dict]]:
    """A document of distinct lines, the notes each rests on, and an accepted list of edits citing new notes."""
    lines = draw(st.lists(st.sampled_from([f"- fact {n}" for n in range(12)]), unique=True, max_size=8))
    notes = [draw(st.lists(st.sampled_from([f"2026-11-01.{n}" for n in range(1, 6)]), max_size=3)) for _ in lines]
    named = draw(st.lists(st.sampled_from(lines), unique=True)) if lines else []
    edits = []
    for line in named:
        cited = draw(
            st.lists(st.sampled_from(["2026-12-01.1", "2026-12-01.2", "2026-11-01.1"]), min_size=1, max_size=2)
        )
        op = draw(st.sampled_from(["add", "replace", "delete"]))
        if op == "add":
            edits.append({"op": "add", "after": line, "text": "- new", "notes": cited})
        elif op == "replace":
            edits.append({"op": "replace", "line": line, "text": "- changed\n- again", "notes": cited})
        else:
            edits.append({"op": "delete", "line": line, "notes": cited})
    return "\n".join(lines), notes, edits


@given(folds())
def test_exactly_the_retired_lines_notes_that_no_line_cites_are_superseded_by_the_edits_retiring_them(case):
    document, notes, edits = case
    result = edited(edits, document) if edits else Edited(document, [])

    followed = follow(document, notes, result.edits, result.content)

    lines = document.split("\n") if document else []
    assert len(followed.line_notes) == len(result.content.split("\n") if result.content else [])
    still = {note for line_notes in followed.line_notes for note in line_notes}
    retiring: dict[str, set[str]] = {}
    for edit in edits:
        if edit["op"] != "add":
            for note in notes[lines.index(edit["line"])]:
                retiring.setdefault(note, set()).update(edit["notes"])
    expected = {note: in_note_order(by - {note}) for note, by in retiring.items() if note not in still and by - {note}}
    assert followed.superseded == expected


def test_edits_that_no_longer_quote_the_document_supersede_nothing_and_save_as_a_rewrite():
    edits = [{"op": "delete", "line": "- likes [redacted: email]", "notes": ["n.1"]}]

    assert follow(BEFORE, NOTES, edits, BEFORE.replace("- likes tea", "- likes [redacted: email]")) == Followed(
        [[], ["d.1"], [], ["d.1", "d.3"], []]
    )


def test_a_whole_document_keeps_the_notes_of_its_unchanged_lines_and_none_for_the_rest():
    saved = "# Memory\n- lives in Lisbon\n- likes green tea\n- written by hand\n- Lisbon office on Fridays\n"

    assert carried(BEFORE, NOTES, saved) == [[], ["d.1"], [], [], ["d.1", "d.3"], []]
    assert carried(BEFORE, None, saved) == [[], [], [], [], [], []]
    assert carried(BEFORE, NOTES, "") == []


def test_each_line_of_the_old_document_lends_its_notes_once_in_order():
    before = "- a\n- b\n- a"
    notes = [["n.1"], ["n.2"], ["n.3"]]

    assert carried(before, notes, "- a\n- a\n- a\n- b") == [[], [], ["n.1"], ["n.2"]]  # the longest run kept
    assert carried(before, notes, "- b\n- a") == [["n.2"], ["n.3"]]


def test_a_compressed_fold_keeps_the_notes_of_the_edited_lines_it_holds_unchanged():
    result = edited([{"op": "delete", "line": "- likes tea", "notes": ["n.1"]}])

    followed = follow(BEFORE, NOTES, result.edits, "# Memory\n- Lisbon office on Fridays")

    assert followed.line_notes == [[], ["d.1", "d.3"]]
    assert followed.superseded == {"d.2": ["n.1"]}


@given(
    st.lists(st.sampled_from(["", "# Memory", "- a", "- b", "- c"]), max_size=8),
    st.lists(st.sampled_from(["", "# Memory", "- a", "- b", "- d"]), max_size=8),
)
def test_every_line_keeps_the_notes_of_an_identical_old_line_each_lent_at_most_once(old, new):
    old, new = ["# Memory", *old], ["# Memory", *new]  # a document of one blank line is the empty one
    notes = [[f"2026-12-01.{n}"] for n in range(len(old))]

    kept = carried("\n".join(old), notes, "\n".join(new))

    lent = [ident for line_notes in kept for ident in line_notes]
    assert len(lent) == len(set(lent))
    for line, line_notes in zip(new, kept, strict=True):
        assert all(old[int(ident.split(".")[1])] == line for ident in line_notes)
    unchanged = min(len(old), len(new))
    if old[:unchanged] == new[:unchanged]:  # a document saved with lines added or taken off its end
        assert kept[:unchanged] == notes[:unchanged]
