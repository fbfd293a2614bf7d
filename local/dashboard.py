"""The dashboard page on the local stack: ``/dashboard`` (static files from ``dashboard/``), its ``config.json``,
and the development sign-in that mints a token with the local secret.

The sign-in (``POST /dashboard/dev-token``) exists only here: ``template.yaml`` has no such route, and in AWS
the page signs in with the OIDC provider instead (its ``config.json`` says ``"mode": "oidc"``). It mints a token
only for a browser that opened the address the stack printed at start (``/dashboard/?key=<key>``): that visit
leaves the key in an HttpOnly, SameSite=Strict cookie, so a web page of another site, or a process that cannot
read the stack's output, gets no token, even through the loopback address.
"""

from __future__ import annotations

import hmac
import json
import mimetypes
import os
import secrets
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from local.template import ROOT

PREFIX = "/dashboard"
STATIC = ROOT / "dashboard"
# What the page may load and reach; the same policy as the CloudFront response headers in template.yaml.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' https:; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'"
)
SECURITY_HEADERS = [
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
]
LOCAL_CONFIG = {"mode": "local", "api_base_url": ""}  # same origin as the API: no CORS needed
SIGN_IN_KEY = "MEMORY_LOCAL_SIGN_IN_KEY"  # set it to fix the key (tests); else one is made at start
SIGN_IN_COOKIE = "memory_local_sign_in"


@dataclass(frozen=True)
class PageReply:
    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)


def sign_in_key() -> str:
    """The development sign-in's key: ``$MEMORY_LOCAL_SIGN_IN_KEY``, else a random one made on the first call
    (the stack makes it before it serves, and prints it)."""
    key = os.environ.get(SIGN_IN_KEY)
    if not key:
        key = os.environ[SIGN_IN_KEY] = secrets.token_urlsafe(18)
    return key


def sign_in_address(api_url: str) -> str:
    return f"{api_url}{PREFIX}/?key={sign_in_key()}"


def _holds_the_key(cookie_header: str) -> bool:
    try:
        cookie = SimpleCookie(cookie_header).get(SIGN_IN_COOKIE)
    except CookieError:
        return False
    return cookie is not None and hmac.compare_digest(cookie.value.encode(), sign_in_key().encode())


def _key_visit(relative: str, keys: list[str]) -> PageReply:
    """``?key=`` on a page address: the right key is kept in the cookie and the address loaded again without it."""
    if not hmac.compare_digest(keys[0].encode(), sign_in_key().encode()):
        return _error(403, "forbidden", "that is not the sign-in key this local stack printed at start")
    cookie = f"{SIGN_IN_COOKIE}={sign_in_key()}; Path={PREFIX}/; HttpOnly; SameSite=Strict"
    return PageReply(
        303, b"", [("Location", f"{PREFIX}/{relative}"), ("Set-Cookie", cookie), ("Cache-Control", "no-store")]
    )


def is_dashboard(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def _json(status: int, body: Any) -> PageReply:
    return PageReply(
        status, json.dumps(body).encode(), [("Content-Type", "application/json"), ("Cache-Control", "no-store")]
    )


def _error(status: int, code: str, message: str, **extra: str) -> PageReply:
    reply = _json(status, {"error": {"code": code, "message": message}})
    return PageReply(reply.status, reply.body, reply.headers + list(extra.items()))


def _static(relative: str) -> PageReply | None:
    """A file under dashboard/, never outside it; None when there is no such file."""
    candidate = (STATIC / relative).resolve()
    if not candidate.is_relative_to(STATIC.resolve()) or not candidate.is_file():
        return None
    kind = mimetypes.guess_type(candidate.name)[0] or "application/octet-stream"
    if kind in ("text/javascript", "application/javascript"):
        kind = "text/javascript; charset=utf-8"
    elif kind.startswith("text/") or kind == "application/json":
        kind += "; charset=utf-8"
    return PageReply(
        200, candidate.read_bytes(), [("Content-Type", kind), ("Cache-Control", "no-cache"), *SECURITY_HEADERS]
    )


def dev_token(body: bytes) -> PageReply:
    """``{"sub", "workspaces": [..], "admin": bool}`` -> ``{"token"}``, HS256 with the local secret (local/token.py)."""
    from agent_memory.basics.errors import InvalidInput, MalformedRequest
    from agent_memory.edges.requests.reading import is_id, parse_json
    from local.token import mint

    try:  # the service's bounded reader: a body 100,000 deep is a 422, not a closed connection
        request = parse_json(body or b"null")
    except MalformedRequest:
        return _error(400, "bad_request", "the body must be JSON")
    except InvalidInput as refused:
        return _error(422, "invalid_input", refused.message)
    if not isinstance(request, dict):
        return _error(422, "invalid_input", "the body must be a JSON object")
    sub, workspaces, admin = request.get("sub"), request.get("workspaces", []), request.get("admin", False)
    if not is_id(sub):
        return _error(422, "invalid_input", "the user id must be 1 to 128 letters, digits or . _ @ -")
    if not isinstance(workspaces, list) or not all(is_id(w) for w in workspaces):
        return _error(422, "invalid_input", "each workspace id must be 1 to 128 letters, digits or . _ @ -")
    if not isinstance(admin, bool):
        return _error(422, "invalid_input", "`admin` must be true or false")
    return _json(200, {"token": mint(sub, sorted(set(workspaces)), admin=admin)})


def answer(method: str, path: str, body: bytes, *, query: str = "", cookie: str = "") -> PageReply:
    """What the local stack answers under /dashboard: files, config, the dev sign-in (for a browser holding the
    key's cookie), a visit with the key, else the page (deep links). ``cookie``: the request's Cookie header."""
    relative = path.removeprefix(PREFIX).lstrip("/")
    if relative == "dev-token":
        if method != "POST":
            return _error(405, "method_not_allowed", "POST a JSON body to sign in", Allow="POST")
        if not _holds_the_key(cookie):
            return _error(
                403,
                "forbidden",
                "the development sign-in needs this stack's key: open the Dashboard address that `make run`"
                " printed at start (/dashboard/?key=...) once in this browser",
            )
        return dev_token(body)
    if method not in ("GET", "HEAD"):
        return _error(405, "method_not_allowed", f"{method} is not allowed here", Allow="GET, HEAD")
    keys = parse_qs(query).get("key")
    if keys:
        return _key_visit(relative, keys)
    if path == PREFIX:
        return PageReply(308, b"", [("Location", PREFIX + "/")])
    if relative == "config.json":
        return _json(200, LOCAL_CONFIG)
    found = _static(relative) if relative else None
    if found is not None:
        return found
    if "." in relative.rsplit("/", 1)[-1]:  # a file name (the page's own URLs never end in one): no such file
        return _error(404, "not_found", f"no such file: {path}")
    # Any other path is one of the page's own URLs (a deep link): the page routes it.
    page = _static("index.html")
    assert page is not None, "dashboard/index.html is missing"
    return page
