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


def test_the_dev_sign_in_mints_a_local_token() -> None:
    body = json.dumps({"sub": "u-1", "workspaces": ["w-3", "w-3", "w-1"], "admin": True}).encode()
    reply = dashboard.answer("POST", "/dashboard/dev-token", body)
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
        (b'{"sub": "u-1", "admin": "yes"}', 422),
    ],
)
def test_the_dev_sign_in_refuses_bad_input_in_the_error_shape(body: bytes, status: int) -> None:
    reply = dashboard.answer("POST", "/dashboard/dev-token", body)
    assert reply.status == status
    assert set(json.loads(reply.body)["error"]) == {"code", "message"}
