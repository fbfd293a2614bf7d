"""The local stack's /dashboard: files from dashboard/ only, deep links to the page, and the dev sign-in's checks."""

from __future__ import annotations

import json

import jwt
import pytest

from local import dashboard
from local.token import DEFAULT_SECRET


def test_files_come_from_dashboard_only_with_their_type_and_the_security_headers() -> None:
    script = dashboard.answer("GET", "/dashboard/js/app.js", b"")
    assert script.status == 200 and ("Content-Type", "text/javascript; charset=utf-8") in script.headers
    assert ("Content-Security-Policy", dashboard.CONTENT_SECURITY_POLICY) in script.headers
    assert dashboard.answer("GET", "/dashboard/../local/token.py", b"").status == 404
    assert dashboard.answer("GET", "/dashboard/js/missing.js", b"").status == 404


def test_a_deep_link_is_the_page_and_the_bare_prefix_redirects() -> None:
    page = dashboard.answer("GET", "/dashboard/w-3/workspace-settings/team-memory", b"")
    assert page.status == 200 and b'<base href="/dashboard/">' in page.body
    assert dashboard.answer("GET", "/dashboard", b"") == dashboard.PageReply(308, b"", [("Location", "/dashboard/")])
    assert json.loads(dashboard.answer("GET", "/dashboard/config.json", b"").body) == {
        "mode": "local",
        "api_base_url": "",
    }
    assert dashboard.answer("PUT", "/dashboard/memory", b"").status == 405
    assert dashboard.answer("GET", "/dashboard/dev-token", b"").status == 405


KEY = "the-key-printed-at-start"
ADMITTED = f"theme=dark; {dashboard.SIGN_IN_COOKIE}={KEY}"


@pytest.fixture(autouse=True)
def _sign_in_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(dashboard.SIGN_IN_KEY, KEY)


def test_the_dev_sign_in_mints_a_local_token() -> None:
    body = json.dumps({"sub": "u-1", "workspaces": ["w-3", "w-3", "w-1"], "admin": True}).encode()
    reply = dashboard.answer("POST", "/dashboard/dev-token", body, cookie=ADMITTED)
    claims = jwt.decode(
        json.loads(reply.body)["token"], DEFAULT_SECRET, algorithms=["HS256"], audience="memory-dashboard"
    )
    assert (claims["sub"], claims["workspaces"], claims["memory_admin"]) == ("u-1", ["w-1", "w-3"], True)


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{not json", 400),
        (b"[]", 422),
        (b'{"sub": "has space"}', 422),
        (b'{"sub": "u-1", "workspaces": "w-3"}', 422),
        (b'{"sub": "u-1", "workspaces": ["w#3"]}', 422),
        (b'{"sub": "u-1\\n"}', 422),
        (b'{"sub": "u-1", "workspaces": ["w-3\\n"]}', 422),
        (b'{"sub": "u-1", "admin": "yes"}', 422),
    ],
)
def test_the_dev_sign_in_refuses_bad_input_in_the_error_shape(body: bytes, status: int) -> None:
    reply = dashboard.answer("POST", "/dashboard/dev-token", body, cookie=ADMITTED)
    assert reply.status == status
    assert set(json.loads(reply.body)["error"]) == {"code", "message"}


@pytest.mark.parametrize(
    "cookie", ["", "memory_local_sign_in=guess", "memory_local_sign_in", 'x="unclosed', ADMITTED + "x"]
)
def test_without_the_keys_cookie_the_dev_sign_in_mints_nothing(cookie: str) -> None:
    body = json.dumps({"sub": "u-1", "workspaces": [], "admin": True}).encode()

    reply = dashboard.answer("POST", "/dashboard/dev-token", body, cookie=cookie)

    assert reply.status == 403
    assert json.loads(reply.body)["error"]["code"] == "forbidden"
    assert "token" not in json.loads(reply.body)


def test_opening_the_printed_address_keeps_the_key_in_a_strict_cookie_and_drops_it_from_the_address() -> None:
    reply = dashboard.answer("GET", "/dashboard/memory", b"", query=f"key={KEY}")

    assert reply.status == 303
    headers = dict(reply.headers)
    assert headers["Location"] == "/dashboard/memory"
    assert headers["Set-Cookie"] == f"{dashboard.SIGN_IN_COOKIE}={KEY}; Path=/dashboard/; HttpOnly; SameSite=Strict"
    assert (
        dashboard.answer("POST", "/dashboard/dev-token", b'{"sub": "u-1"}', cookie=headers["Set-Cookie"]).status == 200
    )


def test_a_wrong_key_in_the_address_sets_nothing() -> None:
    reply = dashboard.answer("GET", "/dashboard/", b"", query="key=guess")

    assert reply.status == 403
    assert "Set-Cookie" not in dict(reply.headers)


def test_without_a_key_set_one_is_made_once_and_is_hard_to_guess(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(dashboard.SIGN_IN_KEY)

    made = dashboard.sign_in_key()

    assert len(made) >= 20 and made != KEY
    assert dashboard.sign_in_key() == made
    assert dashboard.sign_in_address("http://127.0.0.1:3000") == f"http://127.0.0.1:3000/dashboard/?key={made}"
