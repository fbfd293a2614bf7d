"""Authentication as httpx's ``Auth`` objects: SigV4 is botocore's own signer, checked on fixed requests (known
credentials, known time), on the wire for both clients, and against tampering; the bearer token; the choice by
endpoint."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import botocore.auth
import httpx
import pytest
from agent_memory_client import BearerAuth, ConversationContext, RetryPolicy, SigV4Auth
from agent_memory_client.auth import region_of
from agent_memory_client.exchange import Call, Exchange
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, RefreshableCredentials

from tests.support.clients import Flavour

FIXED = datetime(2026, 12, 3, 10, 15, 0, tzinfo=UTC)
KEYS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
TEMPORARY = Credentials("ASIAEXAMPLE", "secret/with+chars", "FQoGZXIvYXdzE//token==")
API = "https://abc123.execute-api.eu-west-1.amazonaws.com"


@contextmanager
def clock(at: datetime) -> Iterator[None]:
    """botocore's signing clock, stopped at ``at``."""
    with mock.patch.object(botocore.auth, "get_current_datetime", lambda: at.replace(tzinfo=None)):
        yield


def botocore_signature(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes,
    credentials: Credentials,
    region: str,
    service: str = "execute-api",
) -> dict[str, str]:
    """What botocore's ``SigV4Auth`` adds to a request of these parts, used directly."""
    request = AWSRequest(method=method, url=url, headers=dict(headers), data=body)
    botocore.auth.SigV4Auth(credentials, service, region).add_auth(request)
    return dict(request.headers.items())


def signed(auth: httpx.Auth, request: httpx.Request, flow: str = "sync") -> httpx.Request:
    """The request as the auth object hands it to httpx to send, through its blocking or its async flow."""
    if flow == "sync":
        return next(auth.sync_auth_flow(request))

    async def first() -> httpx.Request:
        return await anext(aiter(auth.async_auth_flow(request)))

    return asyncio.run(first())


def verifies(request: httpx.Request, credentials: Credentials, region: str = "eu-west-1") -> bool:
    """API Gateway's check, done with botocore: the signature recomputed from the request as received (the
    headers it names, its URL and body, at its X-Amz-Date) is the one it carries."""
    authorization = request.headers["authorization"]
    names = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    headers = {name: request.headers[name] for name in names if name not in {"x-amz-date", "x-amz-security-token"}}
    at = datetime.strptime(request.headers["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    with clock(at):
        theirs = botocore_signature(request.method, str(request.url), headers, request.content, credentials, region)
    return theirs["Authorization"] == authorization


def test_the_aws_documentation_example_signs_to_its_published_signature() -> None:
    """The IAM ListUsers example of AWS's SigV4 documentation: the published signature, not botocore's word."""
    request = httpx.Request(
        "GET",
        "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    )
    with clock(datetime(2015, 8, 30, 12, 36, 0, tzinfo=UTC)):
        added = signed(SigV4Auth("us-east-1", KEYS, service="iam"), request)

    assert added.headers["authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date, "
        "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    )


@pytest.mark.parametrize("flow", ["sync", "async"])
@pytest.mark.parametrize(
    ("method", "path", "params", "body", "credentials"),
    [
        ("GET", "/v1/tools", {}, None, KEYS),
        ("POST", "/v1/tools/remember", {}, {"context": {"user_id": "u-1"}, "arguments": {"text": "café ☕"}}, KEYS),
        ("POST", "/v1/context", {}, {"context": {"user_id": "a@b.c", "thread_id": "t-1"}}, TEMPORARY),
        (
            "GET",
            "/v1/memory/workspaces/team@corp.example/notes/search",
            {"q": "which units? a+b/c", "k": 5},
            None,
            KEYS,
        ),
        ("DELETE", "/v1/memory/personal/notes/2026-12-03.1", {}, None, TEMPORARY),
    ],
)
def test_a_fixed_request_is_signed_exactly_as_botocore_signs_it(
    flow: str, method: str, path: str, params: dict[str, Any], body: Any, credentials: Credentials
) -> None:
    """The client's own request (path, query, body, Idempotency-Key), signed by the auth object in each flow,
    against botocore signing the same parts directly."""
    key = "k-1" if body is not None else None
    request = Exchange(API, Call(method, path, params, body, key), RetryPolicy()).request(httpx.Client())
    headers = {"content-type": "application/json", "idempotency-key": "k-1"} if body is not None else {}
    content = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()

    with clock(FIXED):
        ours = signed(SigV4Auth("eu-west-1", credentials), request, flow).headers
        theirs = botocore_signature(method, str(request.url), headers, content, credentials, "eu-west-1")

    assert request.content == content
    assert ours["authorization"] == theirs["Authorization"]
    assert ours["x-amz-date"] == theirs["X-Amz-Date"] == "20261203T101500Z"
    assert ours.get("x-amz-security-token") == theirs.get("X-Amz-Security-Token") == credentials.token


def test_what_goes_on_the_wire_is_what_botocore_would_sign(flavour: Flavour) -> None:
    """Through the client and httpx: the request as sent (URL, headers, body) verifies with botocore's signer."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"notes": [], "mode": "keyword"})

    client = flavour.memory(API, credentials=TEMPORARY, http=flavour.mock(answer))
    client.recall(ConversationContext(user_id="u@x", thread_id="t-1"), "which units? 100% + more", k=3)

    wire = sent[0]
    signed_names = wire.headers["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    assert signed_names == ["content-type", "host", "x-amz-date", "x-amz-security-token"]
    at = datetime.strptime(wire.headers["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    headers = {"content-type": wire.headers["content-type"]}
    with clock(at):
        theirs = botocore_signature("POST", str(wire.url), headers, wire.content, TEMPORARY, "eu-west-1")
    assert wire.headers["authorization"] == theirs["Authorization"]
    assert wire.headers["x-amz-security-token"] == TEMPORARY.token
    assert verifies(wire, TEMPORARY)


@pytest.mark.parametrize("flow", ["sync", "async"])
def test_the_signature_covers_the_body_the_query_the_path_and_the_idempotency_key(flow: str) -> None:
    """A request changed after signing no longer verifies, whichever part was changed."""

    def sent(call: Call[Any]) -> httpx.Request:
        return signed(SigV4Auth("eu-west-1", KEYS), Exchange(API, call, RetryPolicy()).request(httpx.Client()), flow)

    def changed(request: httpx.Request, **parts: Any) -> httpx.Request:
        return httpx.Request(
            request.method,
            parts.get("url", request.url),
            headers={**request.headers, **parts.get("headers", {})},
            content=parts.get("content", request.content),
        )

    write = sent(Call("POST", "/v1/tools/remember", body={"arguments": {"text": "a fact"}}, idempotency_key="k-1"))
    read = sent(Call("GET", "/v1/memory/personal/notes/search", params={"q": "which units?", "k": 3}))

    assert verifies(write, KEYS) and verifies(read, KEYS)
    assert not verifies(changed(write, content=write.content.replace(b"a fact", b"a lie!")), KEYS)
    assert not verifies(changed(write, headers={"idempotency-key": "k-2"}), KEYS)
    assert not verifies(changed(read, url=read.url.copy_with(query=b"k=20&q=which%20units%3F")), KEYS)
    assert not verifies(changed(read, url=read.url.copy_with(path="/v1/memory/workspaces/w-1/notes/search")), KEYS)
    assert verifies(changed(read, headers={"user-agent": "a proxy", "accept-encoding": "br"}), KEYS)


def test_refreshable_credentials_are_read_for_each_request(flavour: Flavour) -> None:
    """Credentials near their expiry are refreshed before a request is signed (an instance role, SSO)."""
    issued: list[str] = []

    def refresh() -> dict[str, str]:
        issued.append(f"ASIAROTATED{len(issued)}")
        expiry = datetime.now(UTC) + timedelta(minutes=1)  # inside botocore's refresh window: refreshed at each read
        return {"access_key": issued[-1], "secret_key": "s", "token": "t", "expiry_time": expiry.isoformat()}

    credentials = RefreshableCredentials.create_from_metadata(refresh(), refresh, "test")
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"tools": []})

    client = flavour.memory(API, credentials=credentials, http=flavour.mock(answer))
    client.list_tools()
    client.list_tools()

    used = [request.headers["authorization"].split("Credential=")[1].split("/")[0] for request in sent]
    assert used == issued[1:3] and len(set(used)) == 2


def test_signing_is_chosen_by_the_endpoint(flavour: Flavour) -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"tools": []})

    flavour.memory("http://127.0.0.1:3000", http=flavour.mock(answer)).list_tools()
    flavour.memory(API, credentials=KEYS, http=flavour.mock(answer)).list_tools()
    flavour.memory(
        "https://memory.example.com", signing="sigv4", region="eu-west-2", credentials=KEYS, http=flavour.mock(answer)
    ).list_tools()
    flavour.management(API, token="jwt", http=flavour.mock(answer), retry=RetryPolicy()).get_document()

    local, aws, custom_domain, dashboard = (request.headers.get("authorization") for request in seen)
    assert local is None and "x-amz-date" not in seen[0].headers
    assert aws is not None and "/eu-west-1/execute-api/aws4_request" in aws
    assert custom_domain is not None and "/eu-west-2/execute-api/aws4_request" in custom_domain
    assert dashboard == "Bearer jwt"


def test_the_bearer_token_is_read_for_each_request(flavour: Flavour) -> None:
    tokens = iter(["first", "second"])
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"runs": []})

    dashboard = flavour.management(API, token=lambda: next(tokens), http=flavour.mock(answer))
    dashboard.list_runs()
    dashboard.list_runs()
    with httpx.Client(auth=BearerAuth("plain"), transport=httpx.MockTransport(answer)) as plain:
        plain.get(API)  # an Auth object of httpx's own kind: any httpx client takes it

    assert [request.headers["authorization"] for request in sent] == ["Bearer first", "Bearer second", "Bearer plain"]
    assert all("x-amz-date" not in request.headers for request in sent)


def test_the_region_comes_from_an_execute_api_hostname() -> None:
    assert region_of(API + "/v1/tools") == "eu-west-1"
    assert region_of("https://memory.example.com") is None


def test_sigv4_without_any_region_is_refused_when_the_client_is_made(
    monkeypatch: pytest.MonkeyPatch, flavour: Flavour
) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ValueError, match="SigV4 needs a region"):
        flavour.memory("https://memory.example.com", signing="sigv4")


def test_without_credentials_given_the_standard_chain_signs(monkeypatch: pytest.MonkeyPatch, flavour: Flavour) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIACHAIN")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "chain-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "chain-token")
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"tools": []})

    flavour.memory(API, http=flavour.mock(answer)).list_tools()

    assert "Credential=AKIACHAIN/" in sent[0].headers["authorization"]
    assert sent[0].headers["x-amz-security-token"] == "chain-token"


def test_the_flush_uses_the_apis_region_and_never_raises_without_one(
    monkeypatch: pytest.MonkeyPatch, flavour: Flavour
) -> None:
    aws = flavour.memory(API)
    assert aws._region == "eu-west-1"
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    nowhere = flavour.memory("https://memory.example.com")
    outcome = nowhere.flush(
        ConversationContext(user_id="u-1", thread_id="t-1"), "c-1", [{"role": "user", "content": "x"}]
    )
    assert outcome == {"status": "failed", "note": None, "reason": "no Lambda client: NoRegionError"}
