"""docs/consolidation.md "The edits protocol": the fold asks for cited edits, applies them itself, retries once
with the refusals, then falls back to the rewrite; "nothing to change" saves no version."""

from __future__ import annotations

import pytest

from agent_memory import bootstrap
from agent_memory.domain.notes import Origin
from agent_memory.domain.scope import Scope
from agent_memory.storage.document_store import DocumentStore
from local.token import mint
from tests.support.consolidation import PERSONAL, consolidate, days_ago, folded_counts, notes_of
from tests.support.fakes import fake_tokens
from tests.support.management import SECRET, manage
from tests.support.models import scripted_models
from tests.support.scopes import private, stored, write_note

DOCUMENT = "# Memory\n- lives in Porto\n- likes tea\n\n## Work\n- engineer at Acme\n\n## Home\n- a cat"


@pytest.fixture
def document(call):
    call("update_memory", {"context": private(), "arguments": {"content": DOCUMENT}})


@pytest.fixture
def manage_version(monkeypatch):
    """``GET /v1/memory/personal/document/versions/{version}``'s body, as the dashboard reads it."""
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", SECRET)

    def _get(version: int) -> dict:
        bootstrap.reset()  # the settings read the secret; the consolidation before kept its fake model
        path = f"/v1/memory/personal/document/versions/{version}"
        answer = manage("personal_version", token=mint("u-1", []), path=path)
        assert answer.status == 200, answer
        return answer.body

    return _get


class Scripted:
    """The fake model's answers in order: a dict is a call of ``edit_document``, a string is text."""

    def __init__(self, *answers: str | dict) -> None:
        self.answers = list(answers)

    def __call__(self, system: str, prompt: str) -> str | dict:
        return self.answers.pop(0)


def versions(aws):
    store = DocumentStore(aws, "MemoryTable")
    return store, store.current(PERSONAL, consistent=True)


def test_an_added_fact_goes_where_the_edit_says_and_the_version_records_it(aws, model, document, manage_version):
    note = write_note(PERSONAL, days_ago(9), "likes green tea most")
    edit = {"op": "add", "after": "- likes tea", "text": "- green tea most of all", "notes": [note]}
    model.reply = Scripted({"edits": [edit]})

    result = consolidate()

    _, head = versions(aws)
    assert result["groups_done"] == 1 and head.version == 2
    assert head.content == DOCUMENT.replace("- likes tea", "- likes tea\n- green tea most of all")
    assert folded_counts(aws) == {note: 1}
    assert manage_version(2)["edits"] == [edit]
    assert manage_version(1)["edits"] is None


def test_a_contradiction_is_replaced_with_its_citation(aws, model, document, manage_version):
    note = write_note(PERSONAL, days_ago(9), "moved to Lisbon")
    edit = {"op": "replace", "line": "- lives in Porto", "text": "- lives in Lisbon", "notes": [note]}
    model.reply = Scripted({"edits": [edit]})

    consolidate()

    _, head = versions(aws)
    assert head.content == DOCUMENT.replace("Porto", "Lisbon")
    assert manage_version(2)["edits"] == [edit]


def test_a_refused_list_is_retried_once_with_its_refusals_then_applied(aws, model, document):
    note = write_note(PERSONAL, days_ago(9), "left Acme")
    uncited = {"op": "delete", "line": "- engineer at Acme", "notes": []}
    ambiguous = {"op": "add", "after": "", "text": "- x", "notes": [note]}
    cited = {"op": "delete", "line": "- engineer at Acme", "notes": [note]}
    model.reply = Scripted({"edits": [uncited, ambiguous]}, {"edits": [cited]})

    consolidate()

    _, head = versions(aws)
    assert head.content == DOCUMENT.replace("- engineer at Acme\n", "")
    retry = model.calls[1][1]
    assert "edit 1 (delete): it names no note" in retry
    assert "edit 2 (add): '' matches 2 lines of the document" in retry
    assert [tool.name if tool else None for tool in model.tools] == ["edit_document", "edit_document"]


def test_malformed_edits_twice_fall_back_to_the_rewrite_with_its_guard(aws, model, document, manage_version):
    write_note(PERSONAL, days_ago(9), "fact")
    rewrite = DOCUMENT + "\n- fact"
    model.reply = Scripted({"edits": "everything"}, {"unreadable": "{edits: ["}, rewrite)

    result = consolidate()

    _, head = versions(aws)
    assert result["groups_done"] == 1 and head.content == rewrite
    assert model.tools[2] is None and "complete updated document" in model.calls[2][0]
    assert manage_version(2)["edits"] is None


def test_a_rewrite_fallback_that_drops_half_the_document_fails_the_group(aws, model, document):
    write_note(PERSONAL, days_ago(9), "fact")
    model.reply = Scripted({"edits": [{"op": "delete", "line": "nope", "notes": []}]}, {"edits": 1}, "# Memory")

    result = consolidate()

    assert (result["groups_failed"], result["notes_remaining"]) == (1, 1)
    assert versions(aws)[1].version == 1
    assert all(item["consolidated"] == {"BOOL": False} for item in notes_of(aws))


def test_a_plain_text_answer_is_taken_as_the_whole_document(aws, model, document):
    write_note(PERSONAL, days_ago(9), "fact")
    model.reply = Scripted(DOCUMENT + "\n- fact")

    consolidate()

    assert versions(aws)[1].content == DOCUMENT + "\n- fact"
    assert len(model.calls) == 1


def test_nothing_to_change_marks_the_notes_and_saves_no_version(aws, model, document):
    note = write_note(PERSONAL, days_ago(9), "likes tea")
    model.reply = Scripted({"edits": []})

    result = consolidate()

    assert (result["groups_done"], result["notes_consolidated"], result["notes_remaining"]) == (1, 1, 0)
    assert versions(aws)[1].version == 1
    assert [item["consolidated"] for item in notes_of(aws)] == [{"BOOL": True}]
    assert folded_counts(aws) == {}
    assert note


def test_edit_texts_are_redacted_in_the_version_and_its_edits(aws, model, document, manage_version):
    note = write_note(PERSONAL, days_ago(9), "a key")
    secret = "AKIA" + "IOSFODNN7EXAMPLE"
    model.reply = Scripted({"edits": [{"op": "add", "after": None, "text": f"- key {secret}", "notes": [note]}]})

    consolidate()

    assert secret not in versions(aws)[1].content
    (edit,) = manage_version(2)["edits"]
    assert secret not in edit["text"] and "[redacted" in edit["text"]


def test_with_the_local_extractive_model_the_fold_is_the_model_free_one(aws, monkeypatch, document, manage_version):
    monkeypatch.setenv("MEMORY_CHAT_MODEL", "local:extractive")
    bootstrap.reset()
    note = write_note(PERSONAL, days_ago(9), "moved to Lisbon")

    result = consolidate()

    day = days_ago(9).date().isoformat()
    assert result["groups_done"] == 1
    assert versions(aws)[1].content == f"{DOCUMENT}\n\n## Notes\n- [{day}] moved to Lisbon"
    assert manage_version(2)["edits"] == [
        {"op": "add", "after": None, "text": f"\n## Notes\n- [{day}] moved to Lisbon", "notes": [note]}
    ]


def test_without_a_model_near_identical_notes_fold_into_one_bullet_citing_them_all(
    aws, monkeypatch, document, manage_version, embedder
):
    """Read from the table with their stored vectors: the same terms join, and so do contained terms whose
    vectors' cosine is at least 0.9 (the fake model: 8 shared concepts of 9, 0.94); another fact stays."""
    monkeypatch.setenv("MEMORY_CHAT_MODEL", "local:extractive")
    bootstrap.reset()
    notes = bootstrap.services().memory_service.notes

    def written(days: int, text: str) -> str:
        return notes.append(
            PERSONAL,
            created=days_ago(days),
            text=stored(text),
            source="remember",
            origin=Origin("u-1", "t-1"),
            vector=notes.vector_of(text),
        ).id

    coffee = written(12, "Drinks espresso every morning before the standup meeting at work")
    metric = written(11, "Prefers metric units")
    tea = written(10, "Likes green tea")
    metric_again = written(9, "prefers the metric units.")
    coffee_daily = written(9, "Drinks espresso every morning before the standup meeting at work daily")

    assert consolidate()["groups_done"] == 1

    day = days_ago(9).date().isoformat()
    bullets = versions(aws)[1].content.split("## Notes\n", 1)[1]
    assert bullets == (
        f"- [{days_ago(10).date().isoformat()}] Likes green tea\n- [{day}] prefers the metric units.\n"
        f"- [{day}] Drinks espresso every morning before the standup meeting at work daily"
    )
    assert [edit["notes"] for edit in manage_version(2)["edits"]] == [
        [tea],
        [metric, metric_again],
        [coffee, coffee_daily],
    ]
    assert folded_counts(aws) == dict.fromkeys([coffee, metric, tea, metric_again, coffee_daily], 1)


def manage_runs() -> dict:
    """The newest run as ``GET /v1/admin/consolidation/runs`` lists it."""
    bootstrap.reset()
    answer = manage("list_runs", token=mint("ops", [], admin=True), query={"limit": 1})
    assert answer.status == 200, answer
    return answer.body["runs"][0]


def test_each_run_lists_its_models_tokens_and_how_its_groups_were_folded(aws, model, monkeypatch, manage_version):
    edited, unchanged, rewritten, failed = (Scope("team", f"w-{name}") for name in ("a", "b", "c", "d"))
    for scope in (edited, unchanged, rewritten, failed):
        write_note(scope, days_ago(9), f"note of {scope.key}")
    replies = {
        "ws#w-a": lambda note: {"edits": [{"op": "add", "after": None, "text": "- a", "notes": [note]}]},
        "ws#w-b": lambda note: {"edits": []},
        "ws#w-c": lambda note: "# rewritten",
        "ws#w-d": lambda note: "",
    }

    def reply(system: str, prompt: str) -> str | dict:
        scope = next(key for key in replies if f"note of {key}" in prompt)
        return replies[scope](prompt.split("(id ")[1].split(")")[0])

    model.reply = reply

    consolidate()

    run = bootstrap.services().consolidation_store.runs(1)[0]
    assert run["folds"] == {"edits": 1, "rewrite": 1, "model_free": 0, "unchanged": 1}
    assert (run["groups_done"], run["groups_failed"]) == (3, 1)
    sent = sum(fake_tokens(system + prompt) for system, prompt in model.calls)
    assert run["tokens"]["input"] == sent > 0
    answered = fake_tokens('{"edits": [{"op": "add", "after": null, "text": "- a", "notes": ["x"]}]}')
    assert run["tokens"]["output"] >= answered + fake_tokens('{"edits": []}') + fake_tokens("# rewritten")
    listed = manage_runs()
    assert listed["tokens"] == run["tokens"] and listed["folds"] == run["folds"]


def test_a_model_free_run_costs_no_tokens(aws, monkeypatch):
    scripted_models().fold = None
    write_note(PERSONAL, days_ago(9), "x")

    consolidate()

    run = bootstrap.services().consolidation_store.runs(1)[0]
    assert run["tokens"] == {"input": 0, "output": 0}
    assert run["folds"] == {"edits": 0, "rewrite": 0, "model_free": 1, "unchanged": 0}
