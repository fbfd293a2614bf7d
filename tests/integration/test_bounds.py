"""docs/api.md §6 "Bounds": no request's size or strangeness decides how long it takes, how large its answer
is, or whether it gets one.

- a date expression in a query never fails a recall (a year out of range is words; only ASCII digits count);
- a recall query is at most 2,000 characters (422 ``validation_error``), on the tool and the dashboard's search;
- a body holds at most 10,000 keys (422 ``too_many_keys`` before any model validates it);
- a 422 lists at most 20 problems in ``details`` and says in its message how many there were, and names the
  first one (``context.visibility`` is required);
- the local stack answers a payload 100,000 deep on every route of the HTTP API, the dashboard's sign-in and
  the Lambda Invoke API, never with a closed connection.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.edges.requests.reading import MAX_KEYS, MAX_QUERY_CHARS
from tests.support.management import SECRET, USER, manage
from tests.support.scopes import private

DEEP = "[" * 100_000 + "]" * 100_000
DATES = ["in January 0000", "since may 0000", "in June \u0660\u0660\u0660\u0660", "on 3 May 0000", "999 months ago"]


@pytest.fixture(autouse=True)
def _local_auth(monkeypatch):
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", SECRET)


def _recall(call, query: str) -> Any:
    return call("recall", {"context": private(), "arguments": {"query": query}})


# --- dates ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", DATES)
def test_a_date_out_of_range_never_fails_a_recall(call, query):
    note = call("remember", {"context": private(), "arguments": {"text": f"Planned the trip {query}"}}).body["note"]

    tool = _recall(call, query)
    search = manage("personal_search", token=USER, query={"q": query})

    assert (tool.status, search.status) == (200, 200), (tool.body, search.body)
    assert [found["id"] for found in tool.body["notes"]] == [note["id"]]  # its words still find it
    assert [found["id"] for found in search.body["notes"]] == [note["id"]]


# --- the query's length -----------------------------------------------------------------------------------


def test_a_recall_query_of_2000_characters_is_answered(call):
    query = "teal " * (MAX_QUERY_CHARS // 5)

    assert _recall(call, query).status == 200
    assert manage("personal_search", token=USER, query={"q": query}).status == 200


@pytest.mark.parametrize("length", [MAX_QUERY_CHARS + 1, 4_500_000])
def test_a_longer_recall_query_is_a_422_validation_error(call, length):
    query = ("teal colour scheme " * (length // 19 + 1))[:length]

    started = time.perf_counter()
    tool = _recall(call, query)
    tool_s = time.perf_counter() - started
    search = manage("personal_search", token=USER, query={"q": query})

    for answer in (tool, search):
        assert (answer.status, answer.body["error"]["code"]) == (422, "validation_error"), answer.body
        assert f"at most {MAX_QUERY_CHARS:,} characters" in answer.body["error"]["message"]
    print(f"\nrecall of a {length:,}-character query refused in {tool_s * 1000:.0f} ms")


# --- keys and details -------------------------------------------------------------------------------------


def _remember_with_unknown_keys(call, count: int) -> Any:
    arguments = {"text": "x", **{f"k{index}": 0 for index in range(count)}}
    return call("remember", raw_body=json.dumps({"context": private(), "arguments": arguments}))


def test_a_422_lists_at_most_20_problems_and_says_how_many_there_were(call):
    answer = _remember_with_unknown_keys(call, 5_000)

    size = len(json.dumps(answer.body))
    assert answer.status == 422
    assert len(answer.body["details"]) == 20
    assert "5,000 problems" in answer.body["error"]["message"]
    assert "`arguments.k0` is not allowed" in answer.body["error"]["message"]
    assert size < 5_000, size  # 468,998 bytes before
    assert call("context", {"context": private()}).body["recent_notes"] == []
    print(f"\n5,000 unknown keys: a {size:,}-byte 422")


def test_a_dashboard_422_is_capped_the_same_way(aws):
    body = {"content": "x", "expected_version": 0, **{f"k{index}": 0 for index in range(100)}}

    answer = manage("personal_put_document", token=USER, body=body)

    assert answer.status == 422
    assert len(answer.body["details"]) == 20
    assert "100 problems" in answer.body["error"]["message"]


# With the context's and the envelope's own keys, MAX_KEYS unknown arguments are just over the bound.
@pytest.mark.parametrize("count", [MAX_KEYS, 200_000], ids=["just-over", "200000"])
def test_a_body_of_more_than_10000_keys_is_refused_before_validation(call, count):
    started = time.perf_counter()
    answer = _remember_with_unknown_keys(call, count)
    elapsed = time.perf_counter() - started

    assert answer.status == 422
    assert answer.body["details"][0]["type"] == "too_many_keys"
    assert len(json.dumps(answer.body)) < 1_000
    print(f"\n{count:,} unknown keys refused in {elapsed * 1000:.0f} ms")


def test_a_dashboard_body_of_more_than_10000_keys_is_refused(aws):
    body = {"content": "x", "expected_version": 0, **{f"k{index}": 0 for index in range(MAX_KEYS)}}

    answer = manage("personal_put_document", token=USER, body=body)

    assert (answer.status, answer.body["details"][0]["type"]) == (422, "too_many_keys")
    assert manage("personal_document", token=USER).body["document"]["version"] == 0


def test_a_missing_field_is_named_in_the_message(call):
    context = {key: value for key, value in private().items() if key != "visibility"}

    answer = call("remember", {"context": context, "arguments": {"text": "x"}})

    assert answer.status == 422
    assert "`context.visibility` is required" in answer.body["error"]["message"], answer.body


# --- the local stack: an answer for every payload -----------------------------------------------------------


@pytest.fixture
def local_servers(aws) -> Iterator[dict[str, str]]:
    """The local stack's two servers, in this process, over the test's moto: their base URLs."""
    from local.api_gateway import ApiHandler
    from local.functions import Functions
    from local.httpd import serve
    from local.invoke_api import InvokeHandler

    functions = Functions()
    servers = {"api": serve(ApiHandler, 0, functions), "invoke": serve(InvokeHandler, 0, functions)}
    yield {name: f"http://127.0.0.1:{server.server_address[1]}" for name, server in servers.items()}
    for server in servers.values():
        server.shutdown()
        server.server_close()


def _send(url: str, method: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_invoke_api_answers_a_payload_100000_deep(local_servers):
    url = f"{local_servers['invoke']}/2015-03-31/functions/FlushFunction/invocations"

    status, headers, body = _send(url, "POST", DEEP.encode())

    assert (status, "X-Amz-Function-Error" in headers) == (200, False)
    assert json.loads(body)["status"] == "failed"  # the flush's own answer to bad input


@pytest.mark.parametrize(
    "payload", [b"{not json", b"[1, 2", b"\xff\xfe\x00", b"NaN"], ids=["brace", "open", "bytes", "nan"]
)
def test_the_invoke_api_answers_a_payload_that_is_not_json_as_the_function_answers_bad_input(local_servers, payload):
    url = f"{local_servers['invoke']}/2015-03-31/functions/FlushFunction/invocations"

    status, headers, body = _send(url, "POST", payload)

    assert (status, "X-Amz-Function-Error" in headers) == (200, False)
    assert json.loads(body)["status"] == "failed"  # the flush's own answer to bad input


def test_the_invoke_api_still_hands_a_readable_payload_to_the_function(local_servers):
    url = f"{local_servers['invoke']}/2015-03-31/functions/FlushFunction/invocations"

    status, headers, body = _send(url, "POST", b'{"context": {}}')  # JSON, but not a flush request

    assert (status, "X-Amz-Function-Error" in headers) == (200, False)
    assert json.loads(body)["status"] == "failed"  # the flush's own answer to bad input


# A path's parameters as a member of w-3 would send them, so that each route reads the body.
PATH_VALUES = {"{workspace_id}": "w-3", "{user_id}": "u-1", "{version}": "1", "{note_id}": "2026-12-03.1"}


@pytest.mark.parametrize(
    "body",
    [DEEP, json.dumps({f"k{index}": 0 for index in range(MAX_KEYS + 1)}), json.dumps({f"k{i}": 0 for i in range(100)})],
    ids=["deep-100000", "keys-10001", "unknown-keys-100"],
)
def test_every_route_of_the_http_api_answers_a_body_out_of_bounds(local_servers, body):
    from local.api_gateway import api_routes

    routes = api_routes()
    answers = {}
    for route in routes:
        path = route.path
        for name, value in PATH_VALUES.items():
            path = path.replace(name, value)
        headers = {"Content-Type": "application/json"}
        if not path.startswith("/v1/platform/"):  # the backend's routes refuse a bearer token first
            headers["Authorization"] = f"Bearer {USER}"
        status, _, reply = _send(local_servers["api"] + path, route.method, body.encode(), headers)
        answers[route.route_key] = (status, json.loads(reply) if reply else None)

    assert len(answers) == len(routes) > 10
    assert {key: status for key, (status, _) in answers.items() if status >= 500} == {}
    details = {key: len(reply.get("details") or []) for key, (_, reply) in answers.items() if isinstance(reply, dict)}
    assert max(details.values()) <= 20, details


def test_the_dashboards_sign_in_answers_a_body_100000_deep():
    from local.dashboard import dev_token

    refused = dev_token(DEEP.encode())

    assert refused.status == 422
    assert "deeper than 32" in json.loads(refused.body)["error"]["message"]
