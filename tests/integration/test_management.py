"""docs/api.md §5: the dashboard's routes, their authentication and authorization, paging and restore."""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime, timedelta

import boto3
import jwt
import pytest
from botocore.stub import ANY, Stubber

from agent_memory import bootstrap
from agent_memory.domain.scope import Scope
from local.lambda_context import LambdaContext
from local.template import load_handler
from local.token import mint
from tests.support.events import load_event
from tests.support.management import (
    ADMIN,
    OTHER,
    SECRET,
    USER,
    local_auth,  # noqa: F401 - the fixture applies here
    manage,
)
from tests.support.scopes import private, shared, write_note

# --- authentication ---------------------------------------------------------------------------------------


# Tokens are built when the tests are collected, possibly many minutes before they run in a whole-suite run:
# each stays otherwise valid for a day, so that it is refused for its own fault only.
_DAY = 86_400


def _token(**overrides):
    claims = {
        "iss": "memory-local",
        "aud": "memory-dashboard",
        "sub": "u-1",
        "exp": int(time.time()) + _DAY,
        "workspaces": ["w-3"],
    }
    claims.update(overrides)
    return jwt.encode({k: v for k, v in claims.items() if v is not None}, SECRET, algorithm="HS256")


def _unsigned(claims):
    def b64(data):
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(claims)}."


@pytest.mark.parametrize(
    "token",
    [
        None,
        "not-a-jwt",
        jwt.encode(
            {"iss": "memory-local", "aud": "memory-dashboard", "sub": "u-1", "exp": int(time.time()) + _DAY},
            "wrong-secret",
            algorithm="HS256",
        ),
        _token(exp=int(time.time()) - 120),
        _token(aud="someone-else"),
        _token(iss="https://evil.example.com"),
        _token(exp=None),
        _token(sub=None),
        _token(sub=42),
        _token(sub="u 1"),
        _token(exp="tomorrow"),
        _token(nbf=int(time.time()) + _DAY // 2),
        jwt.encode(
            {"iss": "memory-local", "aud": "memory-dashboard", "sub": "u-1", "exp": int(time.time()) + _DAY},
            SECRET,
            algorithm="HS512",
        ),
        _unsigned({"iss": "memory-local", "aud": "memory-dashboard", "sub": "u-1", "exp": int(time.time()) + _DAY}),
    ],
    ids=[
        "none",
        "garbage",
        "bad-signature",
        "expired",
        "wrong-audience",
        "wrong-issuer",
        "no-exp",
        "no-sub",
        "sub-number",
        "sub-pattern",
        "exp-string",
        "not-yet-valid",
        "hs512",
        "alg-none",
    ],
)
def test_a_missing_or_bad_token_is_401_and_changes_nothing(aws, token):
    answer = manage("personal_put_document", token=token, body={"content": "x", "expected_version": 0})

    assert answer.status == 401
    assert answer.body["error"]["code"] == "unauthorized"
    assert manage("personal_document", token=USER).body["document"]["version"] == 0


def test_an_expired_token_within_the_60_second_leeway_still_works(aws):
    assert manage("personal_document", token=_token(exp=int(time.time()) - 30)).status == 200


def test_a_bearer_prefix_is_required(aws):
    event_headers = {"authorization": USER}
    assert manage("personal_document", headers=event_headers).status == 401


def test_401_comes_before_403_and_422(aws):
    answer = manage("team_put_document", path="/v1/memory/workspaces/w-9/document", body="{bad json")
    assert answer.status == 401


# --- authorization ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event_name", "path", "body"),
    [
        ("team_document", "/v1/memory/workspaces/w-3/document", ...),
        ("team_put_document", "/v1/memory/workspaces/w-3/document", {"content": "hijack", "expected_version": 1}),
        ("team_delete_note", "/v1/memory/workspaces/w-3/notes/2026-12-03.1", ...),
        ("team_notes", "/v1/memory/workspaces/w-3/notes", ...),
        ("team_restore", "/v1/memory/workspaces/w-3/document/versions/1/restore", {"expected_version": 1}),
    ],
)
def test_a_non_member_gets_403_and_nothing_changes(call, aws, event_name, path, body):
    call("remember", {"context": shared("w-3"), "arguments": {"text": "team fact"}})
    call("update_memory", {"context": shared("w-3"), "arguments": {"content": "team doc"}})

    answer = manage(event_name, path=path, body=body, token=OTHER)

    assert answer.status == 403
    assert answer.body["error"]["code"] == "forbidden"
    team = manage("team_document", token=USER).body["document"]
    assert (team["version"], team["content"]) == (1, "team doc")
    assert manage("team_notes", token=USER, query={}).body["days"][0]["notes"][0]["text"] == "team fact"


@pytest.mark.parametrize(
    "workspaces",
    [["w-3x"], ["W-3"], "w-30", {"w-3": True}, 7, [["w-3"]]],
)
def test_membership_is_exact_and_odd_shapes_mean_nothing(aws, workspaces):
    assert manage("team_document", token=mint("u-1", workspaces)).status == 403


@pytest.mark.parametrize("workspaces", [["w-3"], "w-3", "w-1 w-3", "w-1,w-3", "[w-1 w-3]", "w-1, w-3"])
def test_every_accepted_workspaces_shape(aws, workspaces):
    assert manage("team_document", token=mint("u-1", workspaces)).status == 200


def test_other_claim_names_grant_nothing(aws):
    token = mint("u-1", [], groups=["w-3"], workspace_id="w-3")
    assert manage("team_document", token=token).status == 403


def test_a_malformed_workspace_id_in_the_path_is_refused(aws):
    assert manage("team_document", path="/v1/memory/workspaces/w%233/document", token=USER).status in (403, 404)


@pytest.mark.parametrize("admin", [False, "true", 1, None])
def test_operator_routes_need_memory_admin_exactly_true(aws, admin):
    token = mint("ops", [], memory_admin=admin) if admin is not None else mint("ops", [])
    assert manage("list_runs", token=token, query={}).status == 403


def test_personal_routes_only_ever_mean_the_token_subject(call, aws):
    call("update_memory", {"context": private("u-2"), "arguments": {"content": "u-2 private"}})
    write_note(Scope("personal", "u-2"), datetime(2026, 12, 3, tzinfo=UTC), "u-2 note")

    doc = manage("personal_document", token=USER, query={"user_id": "u-2"}, headers={"x-user-id": "u-2"}).body[
        "document"
    ]
    notes = manage("personal_notes", token=mint("u-1", [], user_id="u-2"), query={}).body
    put = manage("personal_put_document", token=USER, body={"content": "mine", "expected_version": 0, "user_id": "u-2"})

    assert doc["version"] == 0
    assert notes["days"] == []
    assert put.status == 422  # an unknown key is never followed
    theirs = call("context", {"context": private("u-2")}).body["document"]
    assert theirs["content"] == "u-2 private"


# --- document, history, restore ---------------------------------------------------------------------------


def test_document_with_limits(aws):
    assert manage("personal_document", token=USER).body == {
        "document": {"content": "", "version": 0, "chars": 0, "updated_at": None},
        "limits": {"soft": 18000, "hard": 25000},
    }


def test_put_saves_a_dashboard_version_and_a_stale_version_is_409(aws):
    first = manage("personal_put_document", token=USER, body={"content": "# mine", "expected_version": 0})
    stale = manage("personal_put_document", token=USER, body={"content": "# lost?", "expected_version": 0})

    assert first.status == 200 and first.body["document"]["version"] == 1
    assert first.body["compressed"] is False and first.body["warnings"] == []
    assert stale.status == 409 and stale.body["error"]["code"] == "version_conflict"
    assert manage("personal_document", token=USER).body["document"]["content"] == "# mine"


def test_empty_content_clears_the_document_as_a_new_version(aws):
    manage("personal_put_document", token=USER, body={"content": "# mine", "expected_version": 0})

    cleared = manage("personal_put_document", token=USER, body={"content": "", "expected_version": 1})

    assert cleared.status == 200
    assert (cleared.body["document"]["version"], cleared.body["document"]["content"]) == (2, "")


@pytest.mark.parametrize(
    "body",
    [
        {"content": "x"},
        {"expected_version": 0},
        {"content": "x", "expected_version": -1},
        {"content": "x", "expected_version": "0"},
        {"content": 5, "expected_version": 0},
        {"content": "x", "expected_version": True},
        "not json",
        [],
    ],
)
def test_bad_put_bodies_are_422(aws, body):
    answer = manage("personal_put_document", token=USER, body=body)

    assert answer.status == 422
    assert answer.body["error"]["code"] == "invalid_input"


def test_history_newest_first_with_reasons_and_authors_and_paging(call, aws, monkeypatch):
    call("update_memory", {"context": private(thread="t-9"), "arguments": {"content": "by tool"}})
    manage("personal_put_document", token=USER, body={"content": "by dashboard", "expected_version": 1})
    manage(
        "personal_restore",
        token=USER,
        path="/v1/memory/personal/document/versions/1/restore",
        body={"expected_version": 2},
    )

    page = manage("personal_versions", token=USER, query={"limit": 2}).body
    rest = manage("personal_versions", token=USER, query={"limit": 2, "cursor": page["next_cursor"]}).body

    assert [(v["version"], v["reason"], v["by"]) for v in page["versions"]] == [
        (3, "restore", {"user_id": "u-1"}),
        (2, "dashboard", {"user_id": "u-1"}),
    ]
    assert [(v["version"], v["reason"], v["by"]) for v in rest["versions"]] == [
        (1, "tool", {"user_id": "u-1", "thread_id": "t-9"})
    ]
    assert rest["next_cursor"] is None
    assert page["versions"][0]["chars"] == len("by tool")


@pytest.mark.parametrize("query", [{"limit": 0}, {"limit": 101}, {"limit": "x"}, {"cursor": "abc"}, {"cursor": "1"}])
def test_bad_history_queries_are_422(aws, query):
    assert manage("personal_versions", token=USER, query=query).status == 422


def test_one_version_as_it_was_and_404_for_one_never_saved(aws):
    manage("personal_put_document", token=USER, body={"content": "v1", "expected_version": 0})
    manage("personal_put_document", token=USER, body={"content": "v2", "expected_version": 1})

    assert manage("personal_version", token=USER).body["document"]["content"] == "v1"
    assert manage("personal_version", token=USER, path="/v1/memory/personal/document/versions/9").status == 404
    for bad in ("0", "-1", "abc", "1.5"):
        assert manage("personal_version", token=USER, path=f"/v1/memory/personal/document/versions/{bad}").status in (
            404,
            422,
        )


def test_restore_creates_a_new_version_and_respects_expected_version(aws):
    manage("personal_put_document", token=USER, body={"content": "v1", "expected_version": 0})
    manage("personal_put_document", token=USER, body={"content": "v2", "expected_version": 1})

    stale = manage("personal_restore", token=USER, body={"expected_version": 1})
    restored = manage("personal_restore", token=USER, body={"expected_version": 2})
    missing = manage(
        "personal_restore",
        token=USER,
        path="/v1/memory/personal/document/versions/7/restore",
        body={"expected_version": 3},
    )

    assert stale.status == 409
    assert restored.status == 200 and restored.body["document"] == {
        **restored.body["document"],
        "content": "v1",
        "version": 3,
    }
    assert missing.status == 404
    assert manage("personal_restore", token=USER, body={}).status == 422


def test_team_memory_is_team_owned(call, aws):
    call("update_memory", {"context": shared("w-3", user="u-9"), "arguments": {"content": "by u-9"}})

    answer = manage("team_put_document", token=USER, body={"content": "edited by u-1", "expected_version": 1})

    assert answer.status == 200
    assert call("context", {"context": shared("w-3", user="u-9")}).body["document"]["content"] == "edited by u-1"


# --- notes by day, delete ---------------------------------------------------------------------------------


def test_days_newest_first_skipping_empty_days_and_load_older(aws):
    scope = Scope("personal", "u-1")
    for day in (1, 2, 5, 9, 30):  # gaps between the days that have notes
        for hour in (8, 9):
            write_note(scope, datetime(2026, 11, day, hour, tzinfo=UTC), f"{day}/{hour}")

    first = manage("personal_notes", token=USER, query={"before": "2026-12-04", "days": 2}).body
    second = manage("personal_notes", token=USER, query={"before": first["next_before"], "days": 2}).body
    last = manage("personal_notes", token=USER, query={"before": second["next_before"], "days": 2}).body

    assert [d["day"] for d in first["days"]] == ["2026-11-30", "2026-11-09"]
    assert [n["text"] for n in first["days"][0]["notes"]] == ["30/9", "30/8"]  # newest first
    assert first["next_before"] == "2026-11-09"
    assert [d["day"] for d in second["days"]] == ["2026-11-05", "2026-11-02"]
    assert [d["day"] for d in last["days"]] == ["2026-11-01"]
    assert last["next_before"] is None


def test_a_month_of_notes_in_one_page_and_default_before_is_tomorrow(aws):
    scope = Scope("personal", "u-1")
    start = datetime(2026, 11, 3, 12, tzinfo=UTC)
    for i in range(31):
        write_note(scope, start + timedelta(days=i), f"day {i}")

    answer = manage("personal_notes", token=USER, query={"days": 31}).body

    assert len(answer["days"]) == 31
    assert answer["days"][0]["day"] == "2026-12-03" and answer["days"][-1]["day"] == "2026-11-03"
    assert answer["next_before"] is None


@pytest.mark.parametrize(
    "query",
    [
        {"days": 0},
        {"days": 32},
        {"days": "x"},
        {"before": "2026-13-01"},
        {"before": "2026-02-30"},
        {"before": "yesterday"},
        {"before": "20261203"},
    ],
)
def test_bad_notes_queries_are_422(aws, query):
    assert manage("personal_notes", token=USER, query=query).status == 422


def test_delete_removes_the_note_everywhere_and_a_missing_one_is_404(call, aws):
    note = call("remember", {"context": private(), "arguments": {"text": "forget me"}}).body["note"]

    deleted = manage("personal_delete_note", token=USER, path=f"/v1/memory/personal/notes/{note['id']}")
    again = manage("personal_delete_note", token=USER, path=f"/v1/memory/personal/notes/{note['id']}")

    assert deleted.status == 204 and deleted.body is None
    assert again.status == 404
    assert call("context", {"context": private()}).body["recent_notes"] == []
    assert manage("personal_notes", token=USER, query={}).body["days"] == []
    for bad in ("nope", "2026-12-03.0", "2026-12-03.x", "2026-12-03"):
        assert manage("personal_delete_note", token=USER, path=f"/v1/memory/personal/notes/{bad}").status == 404


def test_a_note_of_another_scope_cannot_be_deleted_through_this_one(call, aws):
    note = call("remember", {"context": shared("w-9"), "arguments": {"text": "theirs"}}).body["note"]

    answer = manage("team_delete_note", token=USER, path=f"/v1/memory/workspaces/w-3/notes/{note['id']}")

    assert answer.status == 404
    assert call("context", {"context": shared("w-9")}).body["recent_notes"][0]["text"] == "theirs"


# --- operators --------------------------------------------------------------------------------------------


def test_runs_are_listed_newest_first(aws):
    store = bootstrap.services().consolidation_store
    for i, started in enumerate(("2026-12-01T03:00:00.000Z", "2026-12-02T03:00:00.000Z")):
        store.save_run(
            {
                "run_id": f"r{i}",
                "started_at": started,
                "finished_at": started,
                "groups_done": i,
                "groups_failed": 0,
                "notes_consolidated": 0,
                "notes_remaining": 0,
                "failures": [],
            }
        )

    answer = manage("list_runs", token=ADMIN, query={"limit": 5})

    assert answer.status == 200
    assert [run["run_id"] for run in answer.body["runs"]] == ["r1", "r0"]


def test_post_starts_a_run_asynchronously(aws, monkeypatch):
    invoked = []

    class FakeLambda:
        def invoke(self, **kwargs):
            invoked.append(kwargs)
            return {"StatusCode": 202}

    bootstrap.provide(lambda_client=FakeLambda())

    answer = manage("start_run", token=ADMIN)

    assert answer.status == 202
    assert invoked[0]["FunctionName"] == "ConsolidateFunction" and invoked[0]["InvocationType"] == "Event"
    event = json.loads(invoked[0]["Payload"])
    assert event["id"] == answer.body["run_id"] and event["time"].endswith("Z")


def test_the_runs_invoke_is_one_the_dashboards_function_is_granted(aws, monkeypatch):
    """With the real Lambda client (botocore's Stubber answering), the Invoke made in the handler is held to
    ManagementFunction's policies (tests/support/iam): lambda:InvokeFunction on the consolidation function the
    template passes it, no other."""
    monkeypatch.setenv("MEMORY_CONSOLIDATE_FUNCTION", "memory-ConsolidateFunction-1A2B")
    bootstrap.reset()
    client = boto3.client("lambda")  # the test session's: its calls are checked as the running function's
    bootstrap.provide(lambda_client=client)
    expected = {"FunctionName": "memory-ConsolidateFunction-1A2B", "InvocationType": "Event", "Payload": ANY}

    with Stubber(client) as stub:
        stub.add_response("invoke", {"StatusCode": 202}, expected)
        answer = manage("start_run", token=ADMIN)
        stub.assert_no_pending_responses()

    assert answer.status == 202


def test_the_aws_authorizer_claims_are_read_when_there_is_no_local_secret(aws, monkeypatch, lambda_context):
    """In AWS the JWT authorizer has verified the token; its flattened claims are what the handler gets."""
    monkeypatch.delenv("MEMORY_LOCAL_JWT_SECRET")
    bootstrap.reset()

    answers = {
        name: load_handler("ManagementFunction")(load_event(f"management/{name}"), lambda_context)
        for name in ("team_document", "list_runs", "personal_notes")
    }

    assert {name: result["statusCode"] for name, result in answers.items()} == {
        "team_document": 200,
        "list_runs": 200,
        "personal_notes": 200,
    }
    event = load_event("management/team_document")
    event["requestContext"]["authorizer"]["jwt"]["claims"]["workspaces"] = "[w-7]"
    assert load_handler("ManagementFunction")(event, lambda_context)["statusCode"] == 403
    del event["requestContext"]["authorizer"]
    assert load_handler("ManagementFunction")(event, lambda_context)["statusCode"] == 401


# --- search -----------------------------------------------------------------------------------------------


def test_search_answers_as_recall_in_its_own_scope_only(call, aws):
    call("remember", {"context": private(), "arguments": {"text": "the billing migration is planned for January"}})
    call("remember", {"context": private(), "arguments": {"text": "likes tea"}})
    call("remember", {"context": private("u-2"), "arguments": {"text": "billing migration secret of u-2"}})

    answer = manage("personal_search", token=USER, query={"q": "billing migration", "k": 5})

    assert answer.status == 200
    assert answer.body["mode"] == "keyword"
    assert [n["text"] for n in answer.body["notes"]] == ["the billing migration is planned for January"]
    assert answer.body["notes"][0]["score"] > 0


def test_team_search_needs_membership(call, aws):
    call("remember", {"context": shared("w-3"), "arguments": {"text": "billing migration"}})

    assert manage("team_search", token=USER, query={"q": "billing"}).body["notes"][0]["text"] == "billing migration"
    assert manage("team_search", token=OTHER, query={"q": "billing"}).status == 403


@pytest.mark.parametrize(
    "query", [{}, {"q": ""}, {"q": "   "}, {"q": "x", "k": 0}, {"q": "x", "k": 21}, {"q": "x", "k": "many"}]
)
def test_bad_search_queries_are_422(aws, query):
    assert manage("personal_search", token=USER, query=query).status == 422


def test_a_busy_day_spanning_several_pages_is_listed_whole(aws):
    scope = Scope("personal", "u-1")
    write_note(scope, datetime(2026, 11, 20, 8, tzinfo=UTC), "older day")
    for i in range(45):
        write_note(scope, datetime(2026, 12, 1, 8, tzinfo=UTC) + timedelta(minutes=i), f"busy {i}")

    answer = manage("personal_notes", token=USER, query={"days": 1}).body

    assert [d["day"] for d in answer["days"]] == ["2026-12-01"]
    assert [n["position"] for n in answer["days"][0]["notes"]] == list(range(45, 0, -1))
    assert answer["next_before"] == "2026-12-01"


# --- bodies that are not JSON (found by tests/fuzz) ---------------------------------------------------------


@pytest.mark.parametrize("media_type", ["text/plain", "multipart/form-data", "application/x-www-form-urlencoded"])
def test_a_body_that_is_not_json_by_its_content_type_is_415_and_changes_nothing(aws, media_type):
    answer = manage(
        "personal_put_document",
        body={"content": "# Mine", "expected_version": 0},
        token=USER,
        headers={"content-type": media_type},
    )

    assert answer.status == 415, answer.body
    assert answer.body["error"]["code"] == "unsupported_media_type"
    assert manage("personal_document", token=USER).body["document"]["version"] == 0


def test_a_body_that_is_not_utf8_is_400_and_changes_nothing(aws):
    event = load_event("management/personal_put_document")
    event["headers"]["authorization"] = f"Bearer {USER}"
    del event["requestContext"]["authorizer"]
    event["body"], event["isBase64Encoded"] = (
        base64.b64encode(b'{"content": "\xff\xfe", "expected_version": 0}').decode(),
        True,
    )

    result = load_handler("ManagementFunction")(event, LambdaContext())

    assert result["statusCode"] == 400
    assert json.loads(result["body"])["error"]["code"] == "malformed_request"
    assert manage("personal_document", token=USER).body["document"]["version"] == 0
