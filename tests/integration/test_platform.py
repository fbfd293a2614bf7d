"""docs/api.md §8 "Backend operations": the chat backend exports, erases and reads the usage of any user's or
workspace's memory by id, behind the tools' IAM authorization; a dashboard token grants nothing there, and
the backend's signature grants nothing on the dashboard's routes."""

from __future__ import annotations

import json

import pytest

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from agent_memory.providers.notes_index import document_id
from local.lambda_context import LambdaContext
from local.template import load_handler
from local.token import mint
from tests.support.calls import Answer
from tests.support.events import load_event
from tests.support.fake_index import FakeNotesIndex
from tests.support.management import ADMIN, USER, local_auth  # noqa: F401 - the fixture applies
from tests.support.people import export_all, fill, get, partition
from tests.support.scopes import private, shared

PERSONAL = Scope("personal", "u-1")
NEIGHBOUR = Scope("personal", "u-2")
TEAM = Scope("team", "w-3")
CALLER = "arn:aws:sts::123456789012:assumed-role/platform-data-requests/data-requests"
EVENTS = {
    ("GET", "users", "export"): "user_export",
    ("DELETE", "users", ""): "user_erase",
    ("GET", "users", "usage"): "user_usage",
    ("GET", "workspaces", "export"): "workspace_export",
    ("DELETE", "workspaces", ""): "workspace_erase",
    ("GET", "workspaces", "usage"): "workspace_usage",
}


@pytest.fixture
def index():
    fake = FakeNotesIndex()
    bootstrap.provide(notes_index=fake)
    return fake


def platform(method: str, kind: str, owner: str, operation: str = "", *, query=None, headers=None) -> Answer:
    """Send events/platform/<...>.json for another id (its path as API Gateway gives it), query or headers."""
    event = load_event(f"platform/{EVENTS[(method, kind, operation)]}")
    path = f"/v1/platform/{kind}/{owner}" + (f"/{operation}" if operation else "")
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["pathParameters"] = {"user_id" if kind == "users" else "workspace_id": owner}
    if query is not None:
        event["rawQueryString"] = "&".join(f"{key}={value}" for key, value in query.items())
        event["queryStringParameters"] = query
    event["headers"].update(headers or {})
    result = load_handler("PlatformFunction")(event, LambdaContext())
    return Answer(result["statusCode"], json.loads(result["body"]) if result.get("body") else None, result["headers"])


def platform_export(kind: str, owner: str) -> list[dict]:
    pages, cursor = [], None
    while True:
        answer = platform("GET", kind, owner, "export", query={"cursor": cursor} if cursor else None)
        assert answer.status == 200, answer.body
        pages.append(answer.body)
        if (cursor := answer.body["next_cursor"]) is None:
            return pages


def _without_instants(pages: list[dict]) -> list[dict]:
    return [{k: v for k, v in page.items() if k not in ("exported_at", "next_cursor")} for page in pages]


def everything(call, aws, scope: Scope, context: dict, base: str, token: str) -> dict:
    """What every read path shows of a scope: the table, context, recall, export, history, injections."""
    return {
        "items": sorted(partition(aws, scope)),
        "context": call("context", {"context": context}).body["recent_notes"],
        "recall": call("recall", {"context": context, "arguments": {"query": "fact"}}).body["notes"],
        "export": _without_instants(export_all(base, token)),
        "versions": get(f"{base}/document/versions", token).body["versions"],
        "injections": get(f"{base}/injections", token).body["injections"],
    }


def test_an_erase_by_the_backend_leaves_nothing_of_the_user_and_every_neighbour_untouched(call, aws, index):
    fill(call)
    fill(call, private("u-2"))
    fill(call, shared("w-3"))
    for context in (private(), private("u-2"), shared("w-3")):
        call("context", {"context": context})
    index.documents[document_id(PERSONAL.key, "2026-12-03.1")] = {"scope": PERSONAL.key, "note_id": "2026-12-03.1"}
    index.documents[document_id(NEIGHBOUR.key, "2026-12-03.1")] = {"scope": NEIGHBOUR.key, "note_id": "2026-12-03.1"}
    neighbour = mint("u-2", [])
    before = {
        "u-2": everything(call, aws, NEIGHBOUR, private("u-2"), "/v1/memory/personal", neighbour),
        "w-3": everything(call, aws, TEAM, shared("w-3"), "/v1/memory/workspaces/w-3", USER),
    }

    receipt = platform("DELETE", "users", "u-1")
    again = platform("DELETE", "users", "u-1")

    assert receipt.status == 200
    assert receipt.body["erased"]["notes"] == 3 and receipt.body["erased"]["versions"] == 2
    assert receipt.body["erased"]["other"] >= 3 and receipt.body["finished_at"]
    assert again.status == 200 and again.body["erased"] == {"notes": 0, "versions": 0, "other": 0}
    assert partition(aws, PERSONAL) == []  # versions, injections, idempotency records, counters: all gone
    assert index.note_ids(PERSONAL.key) == set()
    assert call("context", {"context": private()}).body["recent_notes"] == []
    assert call("recall", {"context": private(), "arguments": {"query": "fact"}}).body["notes"] == []
    assert get("/v1/memory/personal/document").body["document"]["version"] == 0
    assert get("/v1/memory/personal/document/versions").body["versions"] == []
    shown = get("/v1/memory/personal/injections").body["injections"]
    assert [(i["document_version"], i["note_ids"]) for i in shown] == [(0, [])]  # only the turn read after the erase
    pages = platform_export("users", "u-1")
    assert [(page["versions"], page["notes"], page["document"]["version"]) for page in pages] == [([], [], 0)] * 2
    assert index.note_ids(NEIGHBOUR.key) == {"2026-12-03.1"}
    after = {
        "u-2": everything(call, aws, NEIGHBOUR, private("u-2"), "/v1/memory/personal", neighbour),
        "w-3": everything(call, aws, TEAM, shared("w-3"), "/v1/memory/workspaces/w-3", USER),
    }
    for owner in before:  # reading the neighbours again only added their own injection records
        assert {k: v for k, v in after[owner].items() if k not in ("items", "injections")} == {
            k: v for k, v in before[owner].items() if k not in ("items", "injections")
        }
        assert set(before[owner]["items"]) <= set(after[owner]["items"])


def test_a_workspace_erase_by_the_backend_needs_no_operator_and_leaves_the_members_personal_memory(call, aws):
    fill(call, shared("w-3"))
    fill(call)

    receipt = platform("DELETE", "workspaces", "w-3")

    assert receipt.status == 200 and receipt.body["erased"]["notes"] == 3
    assert partition(aws, TEAM) == []
    assert len([sk for sk in partition(aws, PERSONAL) if sk.startswith("note#")]) == 3


@pytest.mark.parametrize(
    ("kind", "owner", "base", "token"),
    [
        ("users", "u-1", "/v1/memory/personal", USER),
        ("workspaces", "w-3", "/v1/memory/workspaces/w-3", USER),
    ],
)
def test_export_and_usage_are_the_dashboards(call, aws, monkeypatch, kind, owner, base, token):
    monkeypatch.setattr("agent_memory.people.control.PAGE_NOTES", 2)
    fill(call, private() if kind == "users" else shared("w-3"), notes=5, versions=2)

    pages = platform_export(kind, owner)

    assert len(pages) == 4  # the versions, then three pages of notes
    assert _without_instants(pages) == _without_instants(export_all(base, token))
    assert platform("GET", kind, owner, "usage").body == get(f"{base}/usage", token).body
    assert platform("GET", kind, owner, "usage").body["notes_today"] == 5


@pytest.mark.parametrize("route", list(EVENTS))
@pytest.mark.parametrize("token", [USER, ADMIN])
def test_a_dashboard_token_grants_nothing_on_the_platforms_routes(call, aws, route, token):
    method, kind, operation = route
    fill(call)
    fill(call, shared("w-3"))
    owner = "u-1" if kind == "users" else "w-3"

    answer = platform(method, kind, owner, operation, headers={"authorization": f"Bearer {token}"})

    assert answer.status == 403 and answer.body["error"]["code"] == "forbidden"
    assert len([sk for sk in partition(aws, PERSONAL) if sk.startswith("note#")]) == 3
    assert len([sk for sk in partition(aws, TEAM) if sk.startswith("note#")]) == 3


def test_the_backends_signature_grants_nothing_on_the_dashboards_routes(call, aws):
    fill(call)
    event = load_event("platform/user_erase")  # SigV4-signed, with the IAM authorizer's context
    event["routeKey"] = event["requestContext"]["routeKey"] = "DELETE /v1/memory/personal"
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/v1/memory/personal"
    event.pop("pathParameters")

    result = load_handler("ManagementFunction")(event, LambdaContext())

    assert result["statusCode"] == 401
    assert len([sk for sk in partition(aws, PERSONAL) if sk.startswith("note#")]) == 3


@pytest.mark.parametrize("route", list(EVENTS))
@pytest.mark.parametrize("owner", ["u 1", "u-1\n", "x" * 129, "u#1", "u%2F1"])
def test_an_id_off_the_pattern_is_422(call, aws, route, owner):
    method, kind, operation = route
    fill(call)

    answer = platform(method, kind, owner, operation)

    assert answer.status == 422 and answer.body["error"]["code"] == "invalid_input"
    assert len([sk for sk in partition(aws, PERSONAL) if sk.startswith("note#")]) == 3


def test_a_bad_cursor_is_422(aws):
    assert platform("GET", "users", "u-1", "export", query={"cursor": "not-a-cursor"}).status == 422


def test_each_call_is_logged_with_the_callers_principal(call, aws, caplog):
    fill(call)
    caplog.clear()

    platform("DELETE", "users", "u-1")

    (logged,) = [record for record in caplog.records if record.getMessage() == "platform operation"]
    assert (logged.caller, logged.operation, logged.scope) == (CALLER, "erase", "user#u-1")
