"""docs/consolidation.md "What the model is shown": a long document is shown in part to a fold's model, and the
edits still apply to the whole of it."""

from __future__ import annotations

from agent_memory.consolidation.folding import propose
from agent_memory.domain.document import Document
from agent_memory.domain.fold import WHOLE_MAX_CHARS, DueNote, fold_view, marker
from agent_memory.domain.prompts import PARTIAL_VIEW
from tests.support.fakes import FakeChatModel, fake_tokens

FILLER = [f"- keeps a record of errand number {i} for the garden shed" for i in range(120)]
DOCUMENT = "\n".join(
    [
        "# Memory",
        "## Home",
        "- lives in Porto near the river",
        *FILLER[:60],
        "## Work",
        "- engineer at Acme",
        *FILLER[60:],
    ]
)
NOTE = DueNote("user#u-1", "note#2026-11-20#1", "2026-11-20", 1, "Moved from Porto to Lisbon in November", "")


def test_a_short_document_is_shown_whole():
    short = "# Memory\n- lives in Porto"

    view = fold_view(short, ["moved to Lisbon"])

    assert (view.text, view.partial) == (short, False)


def test_a_long_document_shows_its_headings_and_the_lines_nearest_each_note():
    assert len(DOCUMENT) > WHOLE_MAX_CHARS

    view = fold_view(DOCUMENT, [NOTE.text])

    shown = view.text.split("\n")
    assert view.partial
    assert "- lives in Porto near the river" in shown  # shares the note's rare word
    assert {"# Memory", "## Home", "## Work"} <= set(shown)
    assert not any(line.startswith("- keeps a record") for line in shown)  # shares none of its words
    assert shown[-3:] == [marker(60), "## Work", marker(61)]  # each run left out: one marker with its count
    assert len(view.text) < len(DOCUMENT) / 10


def test_every_line_of_a_view_is_a_line_of_the_document_or_a_marker():
    view = fold_view(DOCUMENT, [NOTE.text, "Works at Acme as an engineer now"])

    lines = DOCUMENT.split("\n")
    assert all(line in lines or line.startswith("[… ") for line in view.text.split("\n"))


def test_a_fold_on_a_partial_view_edits_the_whole_document_and_keeps_every_line_it_hid():
    line = "- lives in Porto near the river"
    replace = {"op": "replace", "line": line, "text": "- lives in Lisbon", "notes": [NOTE.id]}
    model = FakeChatModel(reply=lambda system, prompt: {"edits": [replace]})

    proposal = propose(model, Document(DOCUMENT, 3, None), [NOTE])

    assert proposal.kind == "edits"
    assert proposal.content == DOCUMENT.replace("- lives in Porto near the river", "- lives in Lisbon")
    prompt = model.calls[0][1]
    assert prompt.startswith(PARTIAL_VIEW) and FILLER[0] not in prompt
    assert proposal.input_tokens < fake_tokens(DOCUMENT) / 3  # the system prompt and the view: a third at most


def test_a_plain_text_answer_to_a_partial_view_is_not_a_document_the_rewrite_is_shown_the_whole():
    answers = iter(["# Memory\n- lives in Lisbon", DOCUMENT + "\n- lives in Lisbon"])
    model = FakeChatModel(reply=lambda system, prompt: next(answers))

    proposal = propose(model, Document(DOCUMENT, 3, None), [NOTE])

    assert proposal.kind == "rewrite"
    assert proposal.content == DOCUMENT + "\n- lives in Lisbon"  # not the two-line answer to the view
    assert len(model.calls) == 2 and FILLER[0] in model.calls[1][1]


def test_a_marker_quoted_as_a_line_is_refused_and_asked_again():
    hidden = marker(60)
    answers = iter(
        [
            {"edits": [{"op": "add", "after": hidden, "text": "- lives in Lisbon", "notes": [NOTE.id]}]},
            {"edits": [{"op": "add", "after": None, "text": "- lives in Lisbon", "notes": [NOTE.id]}]},
        ]
    )
    model = FakeChatModel(reply=lambda system, prompt: next(answers))

    proposal = propose(model, Document(DOCUMENT, 3, None), [NOTE])

    assert proposal.kind == "edits" and proposal.content == DOCUMENT + "\n- lives in Lisbon"
    assert "refused" in model.calls[1][1]
