"""SigV4: the client's signatures are botocore's own: on fixed requests (known credentials, known time), on the wire."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import botocore.auth
import httpx
import pytest
from agent_memory_client import ConversationContext, ManagementClient, MemoryClient, RetryPolicy
from agent_memory_client.sigv4 import Credentials, query_string, region_of, sign
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials as BotocoreCredentials

FIXED = datetime(2026, 12, 3, 10, 15, 0, tzinfo=UTC)
KEYS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
TEMPORARY = Credentials("ASIAEXAMPLE", "secret/with+chars", "FQoGZXIvYXdzE//token==")
API = "https://abc123.execute-api.eu-west-1.amazonaws.com"


def botocore_signature(
    monkeypatch: pytest.MonkeyPatch,
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes,
    credentials: Credentials,
    region: str,
    at: datetime,
    service: str = "execute-api",
) -> dict[str, str]:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: at.replace(tzinfo=None))
    request = AWSRequest(method=method, url=url, headers=dict(headers), data=body)
    SigV4Auth(
        BotocoreCredentials(credentials.access_key, credentials.secret_key, credentials.token), service, region
    ).add_auth(request)
    return dict(request.headers.items())


def test_the_aws_documentation_example_signs_to_its_published_signature() -> None:
    """The IAM ListUsers example of AWS's SigV4 documentation, independent of botocore."""
    added = sign(
        "GET",
        "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
        {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
        b"",
        credentials=KEYS,
        region="us-east-1",
        service="iam",
        now=datetime(2015, 8, 30, 12, 36, 0, tzinfo=UTC),
    )
    assert added["Authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date, "
        "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    )


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
    monkeypatch: pytest.MonkeyPatch,
    method: str,
    path: str,
    params: dict[str, Any],
    body: Any,
    credentials: Credentials,
) -> None:
    query = query_string(params)
    url = API + path + (f"?{query}" if query else "")
    content = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()
    headers = {"content-type": "application/json", "idempotency-key": "k-1"} if body is not None else {}

    ours = sign(method, url, headers, content, credentials=credentials, region="eu-west-1", now=FIXED)
    theirs = botocore_signature(monkeypatch, method, url, headers, content, credentials, "eu-west-1", FIXED)

    assert ours["Authorization"] == theirs["Authorization"]
    assert ours["X-Amz-Date"] == theirs["X-Amz-Date"] == "20261203T101500Z"
    assert ours.get("X-Amz-Security-Token") == theirs.get("X-Amz-Security-Token") == credentials.token


def test_what_goes_on_the_wire_is_what_botocore_would_sign(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the client and httpx: the request as sent (URL, headers, body) verifies with botocore's signer."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"notes": [], "mode": "keyword"})

    client = MemoryClient(API, credentials=lambda: TEMPORARY, http=httpx.Client(transport=httpx.MockTransport(answer)))
    client.recall(ConversationContext(user_id="u@x", thread_id="t-1"), "which units? 100% + more", k=3)

    wire = sent[0]
    signed_names = wire.headers["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    assert signed_names == ["content-type", "host", "x-amz-date", "x-amz-security-token"]
    at = datetime.strptime(wire.headers["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    headers = {"content-type": wire.headers["content-type"]}
    theirs = botocore_signature(monkeypatch, "POST", str(wire.url), headers, wire.content, TEMPORARY, "eu-west-1", at)
    assert wire.headers["authorization"] == theirs["Authorization"]
    assert wire.headers["x-amz-security-token"] == TEMPORARY.token


def test_signing_is_chosen_by_the_endpoint() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"tools": []})

    def mock() -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(answer))

    MemoryClient("http://127.0.0.1:3000", http=mock()).list_tools()
    MemoryClient(API, credentials=lambda: KEYS, http=mock()).list_tools()
    MemoryClient(
        "https://memory.example.com", signing="sigv4", region="eu-west-2", credentials=lambda: KEYS, http=mock()
    ).list_tools()
    ManagementClient(API, token="jwt", http=mock(), retry=RetryPolicy()).get_document()

    local, aws, custom_domain, dashboard = (request.headers.get("authorization") for request in seen)
    assert local is None and "x-amz-date" not in seen[0].headers
    assert aws is not None and "/eu-west-1/execute-api/aws4_request" in aws
    assert custom_domain is not None and "/eu-west-2/execute-api/aws4_request" in custom_domain
    assert dashboard == "Bearer jwt"


def test_the_region_comes_from_an_execute_api_hostname() -> None:
    assert region_of(API + "/v1/tools") == "eu-west-1"
    assert region_of("https://memory.example.com") is None


def test_without_credentials_given_the_standard_chain_signs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIACHAIN")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "chain-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "chain-token")
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"tools": []})

    MemoryClient(API, http=httpx.Client(transport=httpx.MockTransport(answer))).list_tools()

    assert "Credential=AKIACHAIN/" in sent[0].headers["authorization"]
    assert sent[0].headers["x-amz-security-token"] == "chain-token"


def test_the_flush_uses_the_apis_region_and_never_raises_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    aws = MemoryClient(API)
    assert aws._region == "eu-west-1"
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    nowhere = MemoryClient("https://memory.example.com")
    outcome = nowhere.flush(
        ConversationContext(user_id="u-1", thread_id="t-1"), "c-1", [{"role": "user", "content": "x"}]
    )
    assert outcome == {"status": "failed", "note": None, "reason": "no Lambda client: NoRegionError"}
