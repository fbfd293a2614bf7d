"""The HTTP API's front: route a request by the template's events, hand the function a payload v2 event, and
read its result as API Gateway does (what it cannot read is a 502)."""

from __future__ import annotations

import base64
import binascii
import traceback
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any, NoReturn
from urllib.parse import parse_qsl, unquote, urlsplit

from local import dashboard
from local.environment import ACCOUNT_ID, log
from local.httpd import Answer, Reply, RequestHandler, json_reply
from local.template import Route, http_routes

# Headers that describe one hop of the connection, never passed through.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"}


class GatewayError(Exception):
    """An answer that API Gateway itself gives (no route, a failed integration), in the contract's shape."""

    def __init__(self, status: int, code: str, message: str, headers: Iterable[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.reply = json_reply(status, {"error": {"code": code, "message": message}}, headers)


@cache
def api_routes() -> list[Route]:
    """The template's HTTP API routes, literal paths before parameterised ones (the more specific wins, as in AWS)."""
    return sorted(http_routes(), key=lambda route: route.path.count("{"))


def find_route(routes: list[Route], method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route for a request and its path parameters; 404 when no path matches, 405 when no method does."""
    allowed = []
    for route in routes:
        match = route.pattern.match(path)
        if match is None:
            continue
        if route.method in (method, "ANY"):
            return route, {name: unquote(value) for name, value in match.groupdict().items()}
        allowed.append(route.method)
    if allowed:
        message = f"{method} is not allowed on {path}; use {', '.join(allowed)}"
        raise GatewayError(405, "method_not_allowed", message, [("Allow", ", ".join(allowed))])
    raise GatewayError(404, "not_found", f"no route for {method} {path}")


def join_repeated(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Repeated headers or query parameters joined with commas, as payload v2 presents them."""
    joined: dict[str, str] = {}
    for name, value in pairs:
        joined[name] = f"{joined[name]},{value}" if name in joined else value
    return joined


def body_fields(body: bytes) -> dict[str, Any]:
    """Text bodies as they are; bytes that are not UTF-8 base64-encoded, flagged as API Gateway does."""
    if not body:
        return {"isBase64Encoded": False}
    try:
        return {"body": body.decode("utf-8"), "isBase64Encoded": False}
    except UnicodeDecodeError:
        return {"body": base64.b64encode(body).decode("ascii"), "isBase64Encoded": True}


@dataclass(frozen=True)
class HttpRequest:
    """What the gateway knows of a request, independent of http.server."""

    method: str
    target: str  # path and query, as sent
    protocol: str
    source_ip: str
    headers: list[tuple[str, str]]
    body: bytes


def api_gateway_event(request: HttpRequest, route: Route, path_parameters: dict[str, str]) -> dict[str, Any]:
    """The API Gateway HTTP API payload v2 event for a request, shaped like ``events/*.json``.

    As in AWS, cookies move from the ``cookie`` header to ``cookies``, and optional keys (``cookies``,
    ``queryStringParameters``, ``pathParameters``, ``body``) are absent rather than empty.
    """
    url = urlsplit(request.target)
    cookies = [c.strip() for name, value in request.headers if name.lower() == "cookie" for c in value.split(";")]
    headers = join_repeated((name.lower(), value) for name, value in request.headers if name.lower() != "cookie")
    headers.setdefault("x-forwarded-for", request.source_ip)
    headers.setdefault("x-forwarded-proto", "http")
    domain = headers.get("host", "").rsplit(":", 1)[0] or "localhost"
    now = datetime.now(UTC)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route.route_key,
        "rawPath": url.path,
        "rawQueryString": url.query,
    }
    if any(cookies):
        event["cookies"] = [cookie for cookie in cookies if cookie]
    event["headers"] = headers
    if url.query:
        event["queryStringParameters"] = join_repeated(parse_qsl(url.query, keep_blank_values=True))
    if path_parameters:
        event["pathParameters"] = path_parameters
    event["requestContext"] = {
        "accountId": ACCOUNT_ID,
        "apiId": "local",
        "domainName": domain,
        "domainPrefix": domain.split(".")[0],
        "http": {
            "method": request.method,
            "path": url.path,
            "protocol": request.protocol,
            "sourceIp": request.source_ip,
            "userAgent": headers.get("user-agent", ""),
        },
        "requestId": str(uuid.uuid4()),
        "routeKey": route.route_key,
        "stage": "$default",
        "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
        "timeEpoch": int(now.timestamp() * 1000),
    }
    event.update(body_fields(request.body))
    return event


def _bad_result(function: str, why: str) -> NoReturn:
    raise GatewayError(502, "bad_gateway", f"{function} returned a result the HTTP API cannot use: {why}")


def http_reply(function: str, result: Any) -> Reply:
    """API Gateway's reading of a payload v2 result; what it could not read is a 502.

    A result without ``statusCode`` is, as in AWS, a 200 whose JSON body is the result itself.
    """
    if not isinstance(result, dict) or "statusCode" not in result:
        try:
            return json_reply(200, result)
        except (TypeError, ValueError) as error:
            _bad_result(function, f"not JSON ({error})")
    status = result["statusCode"]
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        _bad_result(function, f"statusCode {status!r}")
    headers, multi, cookies = result.get("headers") or {}, result.get("multiValueHeaders") or {}, result.get("cookies")
    if not isinstance(headers, dict) or not isinstance(multi, dict) or not isinstance(cookies, list | None):
        _bad_result(function, "headers, multiValueHeaders or cookies of the wrong type")
    pairs = [(str(name), str(value)) for name, value in headers.items()]
    pairs += [(str(name), str(value)) for name, values in multi.items() for value in values]
    pairs += [("Set-Cookie", str(cookie)) for cookie in cookies or []]
    if any("\r" in name + value or "\n" in name + value for name, value in pairs):
        _bad_result(function, "a header with a line break")
    body = result.get("body") or ""
    if not isinstance(body, str):
        _bad_result(function, "body is not a string")
    try:
        raw = base64.b64decode(body, validate=True) if result.get("isBase64Encoded") else body.encode()
    except binascii.Error:
        _bad_result(function, "isBase64Encoded but body is not base64")
    return Reply(status, raw, [(name, value) for name, value in pairs if name.lower() not in HOP_BY_HOP])


class ApiHandler(RequestHandler):
    """The HTTP API: route from the template, call the function with a payload v2 event, relay its answer."""

    def answer(self, body: bytes) -> Answer:
        path, query = urlsplit(self.path).path, urlsplit(self.path).query
        what, function = f"{self.command} {path}", ""
        if dashboard.is_dashboard(path):  # the page and its local sign-in: not API routes, not in template.yaml
            page = dashboard.answer(self.command, path, body, query=query, cookie=self.headers.get("Cookie", ""))
            return Answer(Reply(page.status, page.body, page.headers), what, "dashboard")
        try:
            route, path_parameters = find_route(api_routes(), self.command, path)
            function = route.function
            request = HttpRequest(
                self.command, self.path, self.request_version, self.client_address[0], self.headers.items(), body
            )
            try:
                result = self.server.functions.invoke(function, api_gateway_event(request, route, path_parameters))
            except Exception as error:
                log(f"{function} raised:\n{traceback.format_exc().rstrip()}")
                raise GatewayError(502, "bad_gateway", f"{function} failed: {type(error).__name__}") from error
            return Answer(http_reply(function, result), what, function)
        except GatewayError as error:
            return Answer(error.reply, what, function)
