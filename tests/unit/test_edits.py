"""docs/consolidation.md "The edits protocol": edits checked against the document, applied by the service."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.domain.edits import EDIT_SCHEMA, MAX_EDITS, Edited, Refused, apply, model_free

DOCUMENT = "# Memory\n- lives in Porto\n- likes tea\n\n## Work\n- engineer at Acme"
GROUP = ["2026-11-20.1", "2026-11-21.1"]


def test_an_add_goes_after_its_line_and_every_other_line_is_kept():
    answer = {"edits": [{"op": "add", "after": "- likes tea", "text": "- likes green tea most", "notes": [GROUP[0]]}]}

    result = apply(DOCUMENT, answer, GROUP)

    assert isinstance(result, Edited)
    assert (
        result.content
        == "# Memory\n- lives in Porto\n- likes tea\n- likes green tea most\n\n## Work\n- engineer at Acme"
    )
    assert result.edits == [
        {"op": "add", "after": "- likes tea", "text": "- likes green tea most", "notes": [GROUP[0]]}
    ]


def test_an_add_without_a_line_goes_at_the_end_before_a_final_line_break():
    answer = {"edits": [{"op": "add", "after": None, "text": "## Travel\n- Japan in May\n", "notes": GROUP}]}

    assert apply("# Memory\n- x\n", answer, GROUP) == Edited(
        "# Memory\n- x\n## Travel\n- Japan in May\n",
        [{"op": "add", "after": None, "text": "## Travel\n- Japan in May", "notes": GROUP}],
    )
    assert apply("", answer, GROUP).content == "## Travel\n- Japan in May"  # type: ignore[union-attr]


def test_a_contradiction_is_replaced_with_its_citation_and_a_line_deleted():
    answer = {
        "edits": [
            {
                "op": "replace",
                "line": "- lives in Porto",
                "text": "- lives in Lisbon (moved Nov 2026)",
                "notes": [GROUP[1]],
            },
            {"op": "delete", "line": "- engineer at Acme", "notes": [GROUP[0]]},
        ]
    }

    result = apply(DOCUMENT, answer, GROUP)

    assert isinstance(result, Edited)
    assert result.content == "# Memory\n- lives in Lisbon (moved Nov 2026)\n- likes tea\n\n## Work"


def test_several_adds_after_one_line_keep_their_order():
    answer = {
        "edits": [
            {"op": "add", "after": "# Memory", "text": "- one", "notes": [GROUP[0]]},
            {"op": "add", "after": "# Memory", "text": "- two", "notes": [GROUP[1]]},
        ]
    }

    assert apply("# Memory\n- zero", answer, GROUP).content == "# Memory\n- one\n- two\n- zero"  # type: ignore[union-attr]


def test_nothing_to_change_is_an_accepted_empty_list():
    result = apply(DOCUMENT, {"edits": []}, GROUP)

    assert result == Edited(DOCUMENT, [])
    assert result.unchanged


def refusals(answer: object, document: str = DOCUMENT) -> list[str]:
    result = apply(document, answer, GROUP)
    assert isinstance(result, Refused), result
    return result.reasons


def test_a_delete_without_a_citation_is_refused():
    assert refusals({"edits": [{"op": "delete", "line": "- likes tea", "notes": []}]}) == [
        "edit 1 (delete): it names no note; every edit cites the ids of the notes it comes from"
    ]
    assert refusals({"edits": [{"op": "delete", "line": "- likes tea"}]})[0].startswith("edit 1 (delete): it names no")


def test_an_edit_citing_a_note_outside_the_group_is_refused():
    (reason,) = refusals(
        {"edits": [{"op": "replace", "line": "- likes tea", "text": "- tea", "notes": ["2020-01-01.1"]}]}
    )
    assert "'2020-01-01.1', not a note of this group" in reason


def test_an_ambiguous_or_missing_line_is_refused():
    document = "# A\n- same\n# B\n- same"
    (ambiguous,) = refusals({"edits": [{"op": "replace", "line": "- same", "text": "- x", "notes": GROUP}]}, document)
    assert "matches 2 lines" in ambiguous
    (missing,) = refusals({"edits": [{"op": "add", "after": "- likes coffee", "text": "- x", "notes": GROUP}]})
    assert "is not a line of the document" in missing
    (near,) = refusals({"edits": [{"op": "delete", "line": "- likes tea ", "notes": GROUP}]})  # a trailing space
    assert "is not a line" in near


def test_two_changes_of_one_line_and_empty_texts_are_refused():
    reasons = refusals(
        {
            "edits": [
                {"op": "replace", "line": "- likes tea", "text": "- coffee", "notes": GROUP},
                {"op": "delete", "line": "- likes tea", "notes": GROUP},
                {"op": "replace", "line": "# Memory", "text": "\n", "notes": GROUP},
                {"op": "add", "after": None, "text": "", "notes": GROUP},
            ]
        }
    )
    assert [reason.split(":")[0] for reason in reasons] == [
        "edit 2 (delete)",
        "edit 3 (replace)",
        "edit 4 (add)",
    ]
    assert "already changed by an earlier edit" in reasons[0]


def test_one_refused_edit_refuses_the_whole_list():
    answer = {
        "edits": [
            {"op": "add", "after": None, "text": "- fine", "notes": GROUP},
            {"op": "delete", "line": "- likes tea", "notes": []},
        ]
    }
    assert refusals(answer) == [
        "edit 2 (delete): it names no note; every edit cites the ids of the notes it comes from"
    ]


def test_malformed_answers_are_refused_with_what_is_wrong():
    for answer in ("not json", "{}", {"edits": "all"}, {"edits": [{"op": "rewrite", "notes": GROUP}]}, [1, 2]):
        (reason,) = refusals(answer)
        assert reason.startswith("the answer is not an edit list: ")
    too_many = {"edits": [{"op": "add", "text": "- x", "notes": GROUP}] * (MAX_EDITS + 1)}
    assert refusals(too_many)[0].startswith("the answer is not an edit list")


def test_an_answer_as_json_text_is_read_like_the_object():
    answer = {"edits": [{"op": "delete", "line": "- likes tea", "notes": GROUP}]}
    assert apply(DOCUMENT, json.dumps(answer), GROUP) == apply(DOCUMENT, answer, GROUP)


def test_the_tool_schema_describes_the_three_operations():
    item = EDIT_SCHEMA["properties"]["edits"]["items"]
    assert item["properties"]["op"]["enum"] == ["add", "replace", "delete"]
    assert item["required"] == ["op", "notes"]


# --- the fold without a model --------------------------------------------------------------------------------


def test_the_model_free_fold_adds_dated_bullets_under_one_heading_at_the_end():
    notes = [(["2026-11-20.1"], "2026-11-20", "moved to\nLisbon"), (["2026-11-21.1"], "2026-11-21", "likes tea")]

    result = model_free("# Memory\n- x", notes)

    assert result.content == "# Memory\n- x\n\n## Notes\n- [2026-11-20] moved to Lisbon\n- [2026-11-21] likes tea"
    assert [(edit["op"], edit["notes"]) for edit in result.edits] == [
        ("add", ["2026-11-20.1"]),
        ("add", ["2026-11-21.1"]),
    ]
    assert model_free("", notes[:1]).content == "## Notes\n- [2026-11-20] moved to Lisbon"


def test_the_next_model_free_fold_uses_the_same_heading_even_with_a_section_after_it():
    first = model_free("# Memory", [(["2026-11-20.1"], "2026-11-20", "a")]).content
    second = model_free(first + "\n\n## Work\n- y", [(["2026-11-22.1"], "2026-11-22", "b")])

    assert second.content == "# Memory\n\n## Notes\n- [2026-11-20] a\n- [2026-11-22] b\n\n## Work\n- y"
    assert second.edits == [
        {"op": "add", "after": "- [2026-11-20] a", "text": "- [2026-11-22] b", "notes": ["2026-11-22.1"]}
    ]


def test_a_model_free_fold_under_an_ambiguous_section_end_makes_a_heading_at_the_end():
    document = "## Notes\n- [2026-11-20] a\n## Other\n- [2026-11-20] a"
    result = model_free(document, [(["2026-11-22.1"], "2026-11-22", "b")])
    assert result.content == document + "\n\n## Notes\n- [2026-11-22] b"


# --- properties ------------------------------------------------------------------------------------------------

_line = st.text(alphabet="ab -#\t", max_size=6)


@st.composite
def documents_and_edits(draw: st.DrawFn) -> tuple[str, list[dict[str, object]]]:
    lines = draw(st.lists(_line, max_size=12))
    document = "\n".join(lines)
    choices = [*lines, "zz", None]
    edits = []
    for _ in range(draw(st.integers(0, 5))):
        op = draw(st.sampled_from(["add", "replace", "delete"]))
        anchor = draw(st.sampled_from(choices))
        notes = draw(st.sampled_from([[GROUP[0]], GROUP, [], ["other"]]))
        text = "\n".join(draw(st.lists(st.text(alphabet="xy", min_size=1, max_size=3), max_size=3)))
        key = "after" if op == "add" else "line"
        edits.append({"op": op, key: anchor, "text": text, "notes": notes})
    return document, edits


def _added(line: str) -> bool:
    return bool(line) and set(line) <= {"x", "y"}  # edits write x and y only; documents never do


@settings(max_examples=500, deadline=None)
@given(documents_and_edits())
def test_lines_no_accepted_edit_names_are_kept_byte_for_byte_and_a_refused_list_changes_nothing(case):
    document, edits = case
    result = apply(document, {"edits": edits}, GROUP)
    if isinstance(result, Refused):
        assert result.reasons  # and nothing to save: the caller keeps the document as it is
        return
    lines = document.split("\n") if document else []
    named = {lines.index(edit["line"]) for edit in result.edits if edit["op"] != "add"}
    produced = result.content.split("\n") if result.content else []
    kept = [line for i, line in enumerate(lines) if i not in named]
    # One empty line left alone is the empty document ("a\n" with "a" deleted is ""); beside an added line it
    # is a line ("\na" with "a" replaced is "\nx")
    assert [line for line in produced if not _added(line)] == ([] if kept == [""] and not produced else kept)
    assert all(edit["notes"] and set(edit["notes"]) <= set(GROUP) for edit in result.edits)
    if not result.edits:
        assert result.content == document


def test_a_line_quoted_as_the_model_was_shown_it_fenced_is_read_back_as_the_documents():
    document = "# Memory\n- uses <b> tags & entities"
    answer = {"edits": [{"op": "delete", "line": "- uses &lt;b> tags & entities", "notes": GROUP}]}

    result = apply(document, answer, GROUP)

    assert result == Edited("# Memory", [{"op": "delete", "line": "- uses <b> tags & entities", "notes": GROUP}])
