"""docs/consolidation.md "Superseded notes": a fold's accepted ``replace`` or ``delete`` retires its line, and the
notes cited for that line that no remaining line cites become superseded by the notes the edit cites; every note
shape says so, recall ranks them last, and ``GET {base}/document/provenance`` shows each line's notes."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from agent_memory import bootstrap
from agent_memory.domain.notes import Origin, parse_note_id
from agent_memory.domain.scope import Scope
from agent_memory.providers.notes_index import IndexHit
from agent_memory.storage.note_items import superseded_items
from tests.support.consolidation import PERSONAL, RUN_AT, Died, consolidate, days_ago, die_at_the_mark, die_at_the_save
from tests.support.fake_index import FakeNotesIndex
from tests.support.fakes import FakeChatModel
from tests.support.faults import ScriptedClient, provide_clients, provide_real_clients
from tests.support.management import USER, local_auth, manage  # noqa: F401 - the fixture applies
from tests.support.models import scripted_models
from tests.support.people import delete
from tests.support.scopes import TEAM, private, stored, write_note


class Edits:
    """The fake model's edit lists, one per fold, in order."""

    def __init__(self, *lists: list[dict]) -> None:
        self.lists = list(lists)

    def __call__(self, system: str, prompt: str) -> dict:
        return {"edits": self.lists.pop(0)}


def add(text: str, *notes: str) -> dict:
    return {"op": "add", "after": None, "text": text, "notes": list(notes)}


def superseded_by(ident: str, scope: Scope = PERSONAL) -> list[str] | None:
    """The note's ``superseded_by`` as the dashboard's listing of its day answers it."""
    day, _ = parse_note_id(ident)
    base = "/v1/memory/personal" if scope == PERSONAL else f"/v1/memory/workspaces/{scope.owner_id}"
    answer = manage("personal_notes", path=f"{base}/notes", query={"before": _next(day), "days": 1}, token=USER)
    assert answer.status == 200, answer
    return next(note["superseded_by"] for note in answer.body["days"][0]["notes"] if note["id"] == ident)


def _next(day: str) -> str:
    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def provenance(scope: Scope = PERSONAL) -> dict:
    path = "/v1/memory/personal" if scope == PERSONAL else f"/v1/memory/workspaces/{scope.owner_id}"
    answer = manage("personal_provenance", path=f"{path}/document/provenance", token=USER)
    assert answer.status == 200, answer
    return answer.body


def first_night(model, scope: Scope = PERSONAL) -> dict[str, str]:
    """Night one folds three notes into three lines; "lisbon" is cited for two of them."""
    ids = {
        "lisbon": _note(scope, 10, "lives in Lisbon", "u-2"),
        "tea": _note(scope, 10, "likes tea", "u-2"),
        "office": _note(scope, 10, "goes to the Lisbon office on Fridays", "u-2"),
    }
    model.reply = Edits(
        [
            add("- lives in Lisbon", ids["lisbon"]),
            add("- likes tea", ids["tea"]),
            add("- Lisbon office on Fridays", ids["office"], ids["lisbon"]),
        ]
    )
    consolidate()
    return ids


def _note(scope: Scope, days: float, text: str, author: str = "u-1") -> str:
    note = bootstrap.services().memory_service.notes.append(
        scope, created=days_ago(days), text=stored(text), source="remember", origin=Origin(author, "t-1")
    )
    return note.id


def second_night(model, edits: list[dict]) -> None:
    model.reply = Edits(edits)
    consolidate(RUN_AT + timedelta(hours=1))


def test_a_replace_supersedes_the_notes_of_its_line_that_no_other_line_cites(aws, model):
    ids = first_night(model)
    porto = write_note(PERSONAL, days_ago(8), "moved to Porto")
    replace = {"op": "replace", "line": "- lives in Lisbon", "text": "- lives in Porto", "notes": [porto]}
    office = {"op": "replace", "line": "- Lisbon office on Fridays", "text": "- Porto office", "notes": [porto]}

    second_night(model, [replace, office])

    assert superseded_by(ids["lisbon"]) == [porto]
    assert superseded_by(ids["office"]) == [porto]
    assert superseded_by(ids["tea"]) is None and superseded_by(porto) is None


def test_a_note_another_line_still_cites_is_not_superseded(aws, model):
    ids = first_night(model)
    porto = write_note(PERSONAL, days_ago(8), "moved to Porto")

    second_night(model, [{"op": "replace", "line": "- lives in Lisbon", "text": "- lives in Porto", "notes": [porto]}])

    assert superseded_by(ids["lisbon"]) is None  # "- Lisbon office on Fridays" still rests on it
    assert provenance()["lines"] == [
        {"line": "- lives in Porto", "notes": [porto]},
        {"line": "- likes tea", "notes": [ids["tea"]]},
        {"line": "- Lisbon office on Fridays", "notes": [ids["lisbon"], ids["office"]]},
    ]


def test_a_delete_supersedes_its_lines_notes_by_the_notes_it_cites(aws, model):
    ids = first_night(model)
    coffee = write_note(PERSONAL, days_ago(8), "stopped drinking tea, coffee only")

    second_night(model, [{"op": "delete", "line": "- likes tea", "notes": [coffee]}])

    assert superseded_by(ids["tea"]) == [coffee]
    assert [superseded_by(ids[name]) for name in ("lisbon", "office")] == [None, None]
    assert [line["line"] for line in provenance()["lines"]] == ["- lives in Lisbon", "- Lisbon office on Fridays"]


def test_every_note_shape_carries_superseded_by(call, aws, model):
    ids = first_night(model)
    coffee = write_note(PERSONAL, days_ago(8), "stopped drinking tea, coffee only")
    second_night(model, [{"op": "delete", "line": "- likes tea", "notes": [coffee]}])

    recalled = call("recall", {"context": private(), "arguments": {"query": "tea"}}).body["notes"]
    exported = manage("personal_export", token=USER).body
    while exported["next_cursor"] and not exported["notes"]:
        path = "/v1/memory/personal/export"
        exported = manage("personal_export", path=path, query={"cursor": exported["next_cursor"]}, token=USER).body
    fresh = call("remember", {"context": private(), "arguments": {"text": "likes green tea again"}}).body["note"]
    context = call("context", {"context": private()}).body

    assert {note["id"]: note["superseded_by"] for note in recalled}[ids["tea"]] == [coffee]
    assert {note["id"]: note["superseded_by"] for note in exported["notes"]}[ids["tea"]] == [coffee]
    assert fresh["superseded_by"] is None
    assert [note["superseded_by"] for note in context["recent_notes"]] == [None]


def test_recall_ranks_a_superseded_note_below_every_current_match(call, aws, model):
    ids = first_night(model)
    coffee = write_note(PERSONAL, days_ago(8), "stopped drinking tea")
    second_night(model, [{"op": "delete", "line": "- likes tea", "notes": [coffee]}])
    chai = write_note(PERSONAL, days_ago(1), "orders a chai tea latte with oat milk at the station kiosk")

    notes = call("recall", {"context": private(), "arguments": {"query": "likes tea"}}).body["notes"]

    order = [note["id"] for note in notes]
    assert order.index(ids["tea"]) == len(order) - 1 and {coffee, chai} <= set(order)
    scores = [note["score"] for note in notes]
    assert scores == sorted(scores, reverse=True)


def test_the_provenance_route_answers_every_line_and_an_empty_list_for_a_line_written_by_hand(aws, model):
    ids = first_night(model)
    current = provenance()

    assert current["version"] == 1
    assert [line["notes"] for line in current["lines"]] == [
        [ids["lisbon"]],
        [ids["tea"]],
        [ids["lisbon"], ids["office"]],
    ]
    body = {"content": "- lives in Lisbon\n- written by hand", "expected_version": 1}
    assert manage("personal_put_document", body=body, token=USER).status == 200
    assert provenance() == {
        "version": 2,
        "lines": [{"line": "- lives in Lisbon", "notes": [ids["lisbon"]]}, {"line": "- written by hand", "notes": []}],
    }


def update_memory(call, content: str) -> None:
    answer = call("update_memory", {"context": private(), "arguments": {"content": content}})
    assert answer.status == 200, answer


def test_an_update_memory_keeps_the_notes_of_the_lines_it_did_not_change(call, aws, model):
    ids = first_night(model)

    update_memory(call, "- lives in Lisbon\n- likes green tea\n- Lisbon office on Fridays\n- plays chess")

    assert provenance()["lines"] == [
        {"line": "- lives in Lisbon", "notes": [ids["lisbon"]]},
        {"line": "- likes green tea", "notes": []},
        {"line": "- Lisbon office on Fridays", "notes": [ids["lisbon"], ids["office"]]},
        {"line": "- plays chess", "notes": []},
    ]


def test_an_update_memory_that_changes_no_line_keeps_every_lines_notes(call, aws, model):
    ids = first_night(model)
    before = provenance()["lines"]

    update_memory(call, "\n".join(line["line"] for line in before))
    update_memory(call, "\n".join(line["line"] for line in before))

    assert provenance() == {"version": 3, "lines": before}
    assert before[1] == {"line": "- likes tea", "notes": [ids["tea"]]}


def test_a_fold_after_an_update_memory_still_supersedes(call, aws, model):
    ids = first_night(model)
    update_memory(call, "- lives in Lisbon\n- likes tea\n- Lisbon office on Fridays\n- plays chess")
    coffee = write_note(PERSONAL, days_ago(8), "stopped drinking tea, coffee only")

    second_night(model, [{"op": "delete", "line": "- likes tea", "notes": [coffee]}])

    assert superseded_by(ids["tea"]) == [coffee]
    assert [line["notes"] for line in provenance()["lines"]] == [[ids["lisbon"]], [ids["lisbon"], ids["office"]], []]


def test_a_whole_document_rewrite_keeps_the_notes_of_the_lines_it_left_unchanged(aws, model):
    ids = first_night(model)
    novels = write_note(PERSONAL, days_ago(8), "reads novels")
    rewritten = "- lives in Lisbon\n- likes tea a lot\n- Lisbon office on Fridays\n- reads novels"
    model.reply = lambda system, prompt: rewritten  # text, not the edit tool: the rewrite fallback

    consolidate(RUN_AT + timedelta(hours=1))

    saved = manage("personal_version", path="/v1/memory/personal/document/versions/2", token=USER).body
    assert saved["document"]["content"] == rewritten and saved["edits"] is None  # a rewrite, not edits
    assert provenance()["lines"] == [
        {"line": "- lives in Lisbon", "notes": [ids["lisbon"]]},
        {"line": "- likes tea a lot", "notes": []},
        {"line": "- Lisbon office on Fridays", "notes": [ids["lisbon"], ids["office"]]},
        {"line": "- reads novels", "notes": []},
    ]
    assert superseded_by(ids["tea"]) is None and superseded_by(novels) is None  # a rewrite supersedes nothing


def test_a_restore_keeps_the_notes_of_the_current_lines_it_brings_back_unchanged(aws, model):
    """The restored lines rest on the notes the current version's identical lines rest on, not on the old
    version's: those notes may have been superseded since (a line restored from before a fold would rest on a note
    the fold retired), and the current version's are what later folds have kept true."""
    ids = first_night(model)
    body = {"content": "- lives in Porto\n- likes tea", "expected_version": 1}
    assert manage("personal_put_document", body=body, token=USER).status == 200

    path = "/v1/memory/personal/document/versions/1/restore"
    assert manage("personal_restore", path=path, body={"expected_version": 2}, token=USER).status == 200

    assert provenance() == {
        "version": 3,
        "lines": [
            {"line": "- lives in Lisbon", "notes": []},
            {"line": "- likes tea", "notes": [ids["tea"]]},
            {"line": "- Lisbon office on Fridays", "notes": []},
        ],
    }


def test_a_compression_keeps_the_notes_of_the_lines_it_left_unchanged(call, aws, model):
    ids = first_night(model)
    compressing = FakeChatModel(reply=lambda system, prompt: "- lives in Lisbon\n- likes tea\n- " + "chess " * 1000)
    scripted_models().compression = compressing

    update_memory(call, "- lives in Lisbon\n- likes tea\n- Lisbon office on Fridays\n- " + "chess games " * 2200)

    assert compressing.calls
    assert [line["notes"] for line in provenance()["lines"]] == [[ids["lisbon"]], [ids["tea"]], []]


def test_the_provenance_route_serves_a_team_and_refuses_a_non_member(aws, model):
    ids = first_night(model, TEAM)

    assert provenance(TEAM)["lines"][0] == {"line": "- lives in Lisbon", "notes": [ids["lisbon"]]}
    outsider = manage("team_provenance", path="/v1/memory/workspaces/w-9/document/provenance", token=USER)
    assert outsider.status == 403
    assert manage("personal_provenance", token=None).status == 401


def test_deleting_the_superseding_note_makes_the_old_one_current_again(aws, model):
    ids = first_night(model)
    coffee = write_note(PERSONAL, days_ago(8), "stopped drinking tea")
    second_night(model, [{"op": "delete", "line": "- likes tea", "notes": [coffee]}])

    path = f"/v1/memory/personal/notes/{coffee}"
    assert manage("personal_delete_note", path=path, token=USER).status == 204

    assert superseded_by(ids["tea"]) is None


def test_a_delete_that_read_its_note_before_a_fold_linked_it_still_unlinks(aws, model):
    ids = first_night(model)
    coffee = write_note(PERSONAL, days_ago(8), "stopped drinking tea")
    second_night(model, [{"op": "delete", "line": "- likes tea", "notes": [coffee]}])
    reads = []

    def read_before_the_fold(get_item, **request):  # the delete's read, as it was before the fold saved
        answer = get_item(**request)
        if not reads and "supersedes" in answer.get("Item", {}):
            reads.append(answer["Item"].pop("supersedes"))
        return answer

    provide_clients(lambda real: ScriptedClient(real, get_item=read_before_the_fold))
    bootstrap.reset()
    assert manage("personal_delete_note", path=f"/v1/memory/personal/notes/{coffee}", token=USER).status == 204

    assert reads == [{"SS": [ids["tea"]]}]
    assert superseded_by(ids["tea"]) is None


def test_a_superseded_note_deleted_first_lets_its_superseding_note_go_too(aws, model):
    ids = first_night(model)
    porto = write_note(PERSONAL, days_ago(8), "moved to Porto")
    replace = {"op": "replace", "line": "- lives in Lisbon", "text": "- lives in Porto", "notes": [porto]}
    second_night(model, [replace, {"op": "delete", "line": "- Lisbon office on Fridays", "notes": [porto]}])

    for gone in (ids["lisbon"], porto):
        assert manage("personal_delete_note", path=f"/v1/memory/personal/notes/{gone}", token=USER).status == 204

    assert superseded_by(ids["office"]) is None
    assert [line["notes"] for line in provenance()["lines"]] == [[], [ids["tea"]]]  # the deleted notes left out


def test_a_fold_retiring_a_line_whose_note_was_deleted_before_saves_and_supersedes_the_rest(aws, model):
    ids = first_night(model)
    assert manage("personal_delete_note", path=f"/v1/memory/personal/notes/{ids['office']}", token=USER).status == 204
    porto = write_note(PERSONAL, days_ago(8), "moved to Porto")
    office = {"op": "replace", "line": "- Lisbon office on Fridays", "text": "- Porto office", "notes": [porto]}
    home = {"op": "replace", "line": "- lives in Lisbon", "text": "- lives in Porto", "notes": [porto]}

    second_night(model, [office, home])

    assert superseded_by(ids["lisbon"]) == [porto]
    assert [line["line"] for line in provenance()["lines"]] == ["- lives in Porto", "- likes tea", "- Porto office"]
    notes = [item for item in partition_items(aws) if item["sk"]["S"].startswith("note#")]
    assert all("text" in item for item in notes)  # the deleted note's update made no item of its own


def partition_items(aws, scope: Scope = PERSONAL) -> list[dict]:
    """Every item of the scope's partition: a supersession never makes an item of its own."""
    return aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": scope.key}},
    )["Items"]


def test_erasing_a_members_notes_takes_their_ids_out_of_the_others_links(aws, model):
    ids = first_night(model, TEAM)  # written by u-2
    porto = _note(TEAM, 8, "moved to Porto")  # by u-1
    replace = {"op": "replace", "line": "- likes tea", "text": "- likes coffee", "notes": [porto]}
    second_night(model, [replace])
    assert superseded_by(ids["tea"], TEAM) == [porto]

    assert delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"}).status == 200

    assert superseded_by(ids["tea"], TEAM) is None
    assert provenance(TEAM)["lines"][1] == {"line": "- likes coffee", "notes": []}


def test_after_an_erase_the_provenance_is_empty(aws, model):
    first_night(model)

    assert delete("/v1/memory/personal").status == 200

    assert provenance() == {"version": 0, "lines": []}


@pytest.mark.parametrize("where", ["before the save", "after the save", "midway through marking"])
def test_dying_at_any_step_of_the_fold_supersedes_exactly_once(aws, model, where):
    ids = first_night(model)
    coffee = write_note(PERSONAL, days_ago(8), "stopped drinking tea")
    novels = write_note(PERSONAL, days_ago(8), "reads novels")
    edits = [{"op": "delete", "line": "- likes tea", "notes": [coffee]}, add("- reads novels", novels)]
    if where == "before the save":
        die_at_the_save()
    else:
        die_at_the_mark(after_marks=0 if where == "after the save" else 1)
    model.reply = Edits(edits)
    with pytest.raises(Died):
        consolidate(RUN_AT + timedelta(hours=1))
    provide_real_clients()
    assert superseded_by(ids["tea"]) == (None if where == "before the save" else [coffee])

    model.reply = Edits(edits)  # asked again only when the first attempt saved nothing
    rerun = consolidate(RUN_AT + timedelta(hours=2))

    assert rerun["notes_remaining"] == 0
    assert superseded_by(ids["tea"]) == [coffee]
    assert [line["notes"] for line in provenance()["lines"]] == [
        [ids["lisbon"]],
        [ids["lisbon"], ids["office"]],
        [novels],
    ]
    versions = manage("personal_versions", token=USER).body["versions"]
    assert [version["reason"] for version in versions] == ["consolidation", "consolidation"]


@pytest.mark.parametrize("tokens", [True, False])
def test_a_fold_save_whose_answer_was_lost_supersedes_once(aws, model, lost_answers, tokens):
    ids = first_night(model)
    coffee = write_note(PERSONAL, days_ago(8), "stopped drinking tea")
    clients = lost_answers("transact_write_items", tokens=tokens)

    second_night(model, [{"op": "delete", "line": "- likes tea", "notes": [coffee]}])

    assert sum(client.lost for client in clients) > 0
    assert superseded_by(ids["tea"]) == [coffee]
    versions = manage("personal_versions", token=USER).body["versions"]
    assert [version["version"] for version in versions] == [2, 1]


@pytest.mark.parametrize("path", ["table keyword", "table hybrid", "opensearch"])
def test_recall_answers_the_best_current_matches_before_a_superseded_note(call, aws, request, path):
    """With k asked and a superseded note among the k best, the current match ranked just below k is answered in
    its place, on every path: the answer is widened in ``recall`` itself, above the paths."""
    embedder = request.getfixturevalue("embedder") if path == "table hybrid" else None
    index = FakeNotesIndex() if path == "opensearch" else None
    if index is not None:
        bootstrap.provide(notes_index=index)
    tea, noon, coffee = (
        call("remember", {"context": private(), "arguments": {"text": text}}).body["note"]
        for text in ("likes tea", "drinks tea at noon with the team", "stopped drinking tea, coffee only now")
    )
    aws.transact_write_items(TransactItems=superseded_items("MemoryTable", PERSONAL, {tea["id"]: [coffee["id"]]}))
    if index is not None:
        index.hits = [
            IndexHit(PERSONAL.key, note["day"], note["position"], 3.0 - n) for n, note in enumerate((tea, noon, coffee))
        ]

    def recall(k: int) -> list[dict]:
        answer = call("recall", {"context": private(), "arguments": {"query": "tea", "k": k}})
        assert answer.status == 200, answer
        return answer.body["notes"]

    assert {note["id"] for note in recall(2)} == {noon["id"], coffee["id"]}
    assert [note["id"] for note in recall(3)][-1] == tea["id"]
    if embedder is not None:  # the query embedded once a recall, however often it was widened
        assert embedder.calls.count(["tea"]) == 2
