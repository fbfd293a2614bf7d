"""docs/consolidation.md "The edits protocol", a night on the in-memory stores: the fold asks for cited edits, applies
them itself, retries once with the refusals, then falls back to the rewrite; "nothing to change" saves no version.
The same on DynamoDB, with the versions' recorded edits as the dashboard reads them:
tests/integration/test_consolidation_edits.py."""

from __future__ import annotations

from agent_memory.domain.commands import DocumentWrite
from agent_memory.domain.document import Author
from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import parse_note_sk
from tests.support.consolidation import PERSONAL, days_ago
from tests.support.fakes import fake_tokens
from tests.support.night import NightParts, night, team

DOCUMENT = "# Memory\n- lives in Porto\n- likes tea\n\n## Work\n- engineer at Acme\n\n## Home\n- a cat"


class Scripted:
    """The fake model's answers in order: a dict is a call of ``edit_document``, a string is text."""

    def __init__(self, *answers: str | dict) -> None:
        self.answers = list(answers)

    def __call__(self, system: str, prompt: str) -> str | dict:
        return self.answers.pop(0)


def with_document(scope: Scope = PERSONAL) -> NightParts:
    world = night(queued=False)
    world.service.update_memory(DocumentWrite(scope, DOCUMENT, None, "tool", Author(user_id="u-1")))
    return world


def note(world: NightParts, text: str, scope: Scope = PERSONAL) -> str:
    """A note nine days old; its id."""
    day, position = parse_note_sk(world.write(scope, days_ago(9), text))
    return f"{day}.{position}"


def head(world: NightParts) -> tuple[int, str]:
    current = world.stores.documents.current(PERSONAL)
    return current.version, current.content


def test_an_added_fact_goes_where_the_edit_says_and_the_version_records_its_note() -> None:
    world = with_document()
    cited = note(world, "likes green tea most")
    world.fold_model.reply = Scripted(
        {"edits": [{"op": "add", "after": "- likes tea", "text": "- green tea most of all", "notes": [cited]}]}
    )

    result = world.consolidate()

    assert result["groups_done"] == 1
    assert head(world) == (2, DOCUMENT.replace("- likes tea", "- likes tea\n- green tea most of all"))
    assert world.folded_counts(PERSONAL) == {cited: 1}


def test_a_contradiction_is_replaced_with_its_citation() -> None:
    world = with_document()
    cited = note(world, "moved to Lisbon")
    world.fold_model.reply = Scripted(
        {"edits": [{"op": "replace", "line": "- lives in Porto", "text": "- lives in Lisbon", "notes": [cited]}]}
    )

    world.consolidate()

    assert head(world) == (2, DOCUMENT.replace("Porto", "Lisbon"))


def test_a_refused_list_is_retried_once_with_its_refusals_then_applied() -> None:
    world = with_document()
    cited = note(world, "left Acme")
    uncited = {"op": "delete", "line": "- engineer at Acme", "notes": []}
    ambiguous = {"op": "add", "after": "", "text": "- x", "notes": [cited]}
    world.fold_model.reply = Scripted(
        {"edits": [uncited, ambiguous]}, {"edits": [{"op": "delete", "line": "- engineer at Acme", "notes": [cited]}]}
    )

    world.consolidate()

    assert head(world) == (2, DOCUMENT.replace("- engineer at Acme\n", ""))
    retry = world.fold_model.calls[1][1]
    assert "edit 1 (delete): it names no note" in retry
    assert "edit 2 (add): '' matches 2 lines of the document" in retry
    assert [tool.name if tool else None for tool in world.fold_model.tools] == ["edit_document", "edit_document"]


def test_malformed_edits_twice_fall_back_to_the_rewrite_with_its_guard() -> None:
    world = with_document()
    note(world, "fact")
    rewrite = DOCUMENT + "\n- fact"
    world.fold_model.reply = Scripted({"edits": "everything"}, {"unreadable": "{edits: ["}, rewrite)

    result = world.consolidate()

    assert result["groups_done"] == 1 and head(world) == (2, rewrite)
    assert world.fold_model.tools[2] is None and "complete updated document" in world.fold_model.calls[2][0]
    assert world.store.runs(1)[0]["folds"]["rewrite"] == 1


def test_a_rewrite_fallback_that_drops_half_the_document_fails_the_group() -> None:
    world = with_document()
    note(world, "fact")
    world.fold_model.reply = Scripted(
        {"edits": [{"op": "delete", "line": "nope", "notes": []}]}, {"edits": 1}, "# Memory"
    )

    result = world.consolidate()

    assert (result["groups_failed"], result["notes_remaining"]) == (1, 1)
    assert head(world)[0] == 1
    assert world.marked(PERSONAL) == [False]


def test_a_plain_text_answer_is_taken_as_the_whole_document() -> None:
    world = with_document()
    note(world, "fact")
    world.fold_model.reply = Scripted(DOCUMENT + "\n- fact")

    world.consolidate()

    assert head(world) == (2, DOCUMENT + "\n- fact")
    assert len(world.fold_model.calls) == 1


def test_nothing_to_change_marks_the_notes_and_saves_no_version() -> None:
    world = with_document()
    note(world, "likes tea")
    world.fold_model.reply = Scripted({"edits": []})

    result = world.consolidate()

    assert (result["groups_done"], result["notes_consolidated"], result["notes_remaining"]) == (1, 1, 0)
    assert head(world)[0] == 1
    assert world.marked(PERSONAL) == [True]
    assert world.folded_counts(PERSONAL) == {}


def test_edit_texts_are_redacted_in_the_version() -> None:
    world = with_document()
    cited = note(world, "a key")
    secret = "AKIA" + "IOSFODNN7EXAMPLE"
    world.fold_model.reply = Scripted(
        {"edits": [{"op": "add", "after": None, "text": f"- key {secret}", "notes": [cited]}]}
    )

    world.consolidate()

    version, content = head(world)
    assert version == 2 and secret not in content and "[redacted" in content


def test_each_run_lists_its_models_tokens_and_how_its_groups_were_folded() -> None:
    world = night(queued=False)
    edited, unchanged, rewritten, failed = (team(name) for name in ("a", "b", "c", "d"))
    for scope in (edited, unchanged, rewritten, failed):
        note(world, f"note of {scope.key}", scope)
    replies = {
        "ws#w-a": lambda cited: {"edits": [{"op": "add", "after": None, "text": "- a", "notes": [cited]}]},
        "ws#w-b": lambda cited: {"edits": []},
        "ws#w-c": lambda cited: "# rewritten",
        "ws#w-d": lambda cited: "",
    }

    def reply(system: str, prompt: str) -> str | dict:
        scope = next(key for key in replies if f"note of {key}" in prompt)
        return replies[scope](prompt.split("(id ")[1].split(")")[0])

    world.fold_model.reply = reply

    world.consolidate()

    run = world.store.runs(1)[0]
    assert run["folds"] == {"edits": 1, "rewrite": 1, "model_free": 0, "unchanged": 1}
    assert (run["groups_done"], run["groups_failed"]) == (3, 1)
    sent = sum(fake_tokens(system + prompt) for system, prompt in world.fold_model.calls)
    assert run["tokens"]["input"] == sent > 0
    answered = fake_tokens('{"edits": [{"op": "add", "after": null, "text": "- a", "notes": ["x"]}]}')
    assert run["tokens"]["output"] >= answered + fake_tokens('{"edits": []}') + fake_tokens("# rewritten")


def test_a_model_free_run_costs_no_tokens() -> None:
    world = night(queued=False)
    world.models.fold = None
    note(world, "x")

    world.consolidate()

    run = world.store.runs(1)[0]
    assert run["tokens"] == {"input": 0, "output": 0}
    assert run["folds"] == {"edits": 0, "rewrite": 0, "model_free": 1, "unchanged": 0}
