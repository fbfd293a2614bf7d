"""docs/api.md §6 "Bodies and parameters": bad input is a clear 4xx that changes nothing, never a 5xx.

Which refusal is which (docs/security.md): not JSON, 400 ``malformed_request`` (the dashboard's routes:
422); JSON that is not an object, repeats a key, nests deeper than 32, holds a lone surrogate or an
integer of more than 18 digits, 422 ``invalid_input``; a query or path integer not in plain decimal, 422.
"""

from __future__ import annotations

import json
import time

import jwt
import pytest

from tests.support.events import event_body
from tests.support.management import SECRET, USER, manage
from tests.support.scopes import private

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_33 = json.dumps({"content": "x", "expected_version": 0, "extra": json.loads("[" * 32 + "]" * 32)})
CONTEXT = json.dumps(private())


@pytest.fixture(autouse=True)
def local_auth(monkeypatch):
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", SECRET)


def _document(call) -> dict:
    return call("context", {"context": private()}).body["document"]


def _refused(answer, status=422, code="invalid_input"):
    assert (answer.status, answer.body["error"]["code"]) == (status, code), answer.body


# --- tools and context ------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["remember", "update_memory", "recall", "context"])
@pytest.mark.parametrize(
    "raw",
    [
        DEEP,
        '{"context": ' + "[" * 5000 + "]" * 5000 + "}",
        "[" + json.dumps({"context": private(), "arguments": {"text": "x"}}) + "]",
        '"a string"',
        "42",
        '{"context": ' + CONTEXT + ', "context": ' + json.dumps(private("u-2")) + "}",
        '{"context": ' + CONTEXT + ', "arguments": {"text": "x", "text": "y"}}',
    ],
    ids=["deep-100000", "deep-5000", "array", "string", "number", "duplicate-context", "duplicate-argument"],
)
def test_bodies_that_are_not_one_plain_object_are_422(call, route, raw):
    _refused(call(route, raw_body=raw))
    assert call("recall", {"context": private(), "arguments": {"query": "x"}}).body["notes"] == []


@pytest.mark.parametrize("raw", ["NaN", '{"context": Infinity}', "{bad"])
def test_what_is_not_json_is_400(call, raw):
    _refused(call("remember", raw_body=raw), 400, "malformed_request")


@pytest.mark.parametrize("route, key", [("remember", "text"), ("update_memory", "content")])
def test_a_lone_surrogate_is_422_and_nothing_is_written(call, route, key):
    raw = '{"context": ' + CONTEXT + ', "arguments": {"' + key + '": "before \\ud800 after"}}'

    _refused(call(route, raw_body=raw))
    assert _document(call)["version"] == 0
    assert call("context", {"context": private()}).body["recent_notes"] == []


def test_a_document_version_of_5000_digits_is_422(call):
    raw = json.dumps({"context": private(), "arguments": {"content": "x"}})
    raw = raw.replace('"visibility"', '"document_version": ' + "9" * 5000 + ', "visibility"')

    _refused(call("update_memory", raw_body=raw))
    assert _document(call)["version"] == 0


def test_a_flush_payload_too_deep_or_with_a_surrogate_fails_softly(call):
    deep = event_body("flush")
    nested: list = []
    for _ in range(100):
        nested = [nested]
    deep["messages"][0]["content"] = nested
    surrogate = event_body("flush")
    surrogate["messages"][0]["content"] = "\ud800"

    for body in (deep, surrogate):
        answer = call("flush", body).body
        assert answer["status"] == "failed" and answer["note"] is None


# --- the dashboard ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        DEEP,
        DEEP_33,
        '[{"content": "x", "expected_version": 0}]',
        '{"content": "x", "expected_version": 0, "expected_version": 0}',
        '{"content": "a \\udfff b", "expected_version": 0}',
        '{"content": "x", "expected_version": ' + "9" * 5000 + "}",
        '{"content": "x", "expected_version": 1000000000000000000}',
        '{"content": "x", "expected_version": 1.0}',
    ],
    ids=["deep", "depth-33", "array", "duplicate", "surrogate", "digits-5000", "digits-19", "float"],
)
def test_bad_dashboard_bodies_are_422_and_change_nothing(aws, raw):
    _refused(manage("personal_put_document", token=USER, body=raw))
    _refused(manage("personal_restore", token=USER, body=raw.replace('"content": "x", ', "")))
    assert manage("personal_document", token=USER).body["document"]["version"] == 0


def test_depth_32_is_accepted_as_json_and_then_judged_by_the_schema(aws):
    body = json.dumps({"content": "x", "expected_version": 0, "extra": json.loads("[" * 30 + "]" * 30)})

    answer = manage("personal_put_document", token=USER, body=body)

    assert answer.body["details"][0]["type"] == "extra_forbidden"  # parsed fine; the unknown key is refused


@pytest.mark.parametrize("content_type", ["APPLICATION/JSON", "Application/Json; charset=UTF-8"])
def test_content_type_is_compared_without_regard_to_case(aws, content_type):
    answer = manage(
        "personal_put_document",
        token=USER,
        body={"content": "x", "expected_version": 0},
        headers={"content-type": content_type},
    )

    assert answer.status == 200, answer.body


@pytest.mark.parametrize(
    "event_name, query",
    [
        ("personal_versions", {"cursor": "²"}),
        ("personal_versions", {"cursor": "9" * 5000}),
        ("personal_versions", {"cursor": "+5"}),
        ("personal_versions", {"limit": "+1"}),
        ("personal_versions", {"limit": "1_0"}),
        ("personal_versions", {"limit": "1.0"}),
        ("personal_versions", {"limit": "9" * 5000}),
        ("personal_notes", {"days": "+1"}),
        ("personal_notes", {"days": " 1"}),
        ("personal_search", {"q": "x", "k": "1_0"}),
        ("list_runs", {"limit": "٣"}),
    ],
)
def test_query_integers_are_plain_decimals(aws, event_name, query):
    token = USER if event_name != "list_runs" else _token(memory_admin=True)
    _refused(manage(event_name, token=token, query=query))


@pytest.mark.parametrize("version", ["+1", "1_0", "01", "٣", "9" * 5000])
def test_a_path_version_is_a_plain_decimal(aws, version):
    answer = manage("personal_version", token=USER, path=f"/v1/memory/personal/document/versions/{version}")

    assert answer.status in (404, 422)


# --- tokens -----------------------------------------------------------------------------------------------


def _token(**overrides):
    claims = {"iss": "memory-local", "aud": "memory-dashboard", "sub": "u-1", "exp": int(time.time()) + 600}
    claims.update(overrides)
    return jwt.encode(claims, SECRET, algorithm="HS256")


@pytest.mark.parametrize(
    "claims",
    [
        {"sub": "u-1\n"},
        {"exp": str(int(time.time()) + 600)},
        {"nbf": str(int(time.time()) - 10)},
        {"iat": str(int(time.time()))},
        {"exp": True},
        {"exp": 1e999},
    ],
    ids=["sub-newline", "exp-string", "nbf-string", "iat-string", "exp-bool", "exp-infinite"],
)
def test_tokens_with_a_claim_of_the_wrong_form_are_401(aws, claims):
    _refused(manage("personal_document", token=_token(**claims)), 401, "unauthorized")


def test_a_workspace_id_with_a_trailing_newline_is_not_a_membership(aws):
    token = _token(workspaces=["w-3\n"])

    assert manage("team_document", token=token, path="/v1/memory/workspaces/w-3%0A/document").status in (403, 404)
    assert manage("team_document", token=token, path="/v1/memory/workspaces/w-3/document").status == 403
