"""The local stack (``make run``): the HTTP API and the Lambda Invoke API of ``template.yaml`` on 127.0.0.1.

No AWS account, no Docker: the handlers run in this process, as Lambda would call them, against an embedded
DynamoDB (moto) or the one that ``AWS_ENDPOINT_URL_DYNAMODB`` points at (CONTRACT §1).

- ``$MEMORY_API_PORT`` (3000): API Gateway HTTP API, payload v2 events, routed from the template's events.
- ``$MEMORY_LAMBDA_PORT`` (3001): ``POST /2015-03-31/functions/{name}/invocations``, as ``sam local start-lambda``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import signal
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache, partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any, NoReturn
from urllib.parse import parse_qsl, unquote, urlsplit

from local import dashboard
from local.template import ROOT, Route, function_names, http_routes, load_handler, load_template
from local.template import table_definitions as template_tables
from local.token import DEFAULT_SECRET

HOST = "127.0.0.1"
ACCOUNT_ID = "123456789012"

# What a Lambda sandbox of this service would see, minus AWS: fake credentials and quiet telemetry.
# setdefault semantics: anything the user exported wins.
LOCAL_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
    "MEMORY_TABLE_NAME": "MemoryTable",  # locally a table is named by its logical id
    # No JWT authorizer locally: the management handler verifies HS256 tokens signed with this (CONTRACT §5).
    "MEMORY_LOCAL_JWT_SECRET": DEFAULT_SECRET,
    "MEMORY_CONSOLIDATE_FUNCTION": "ConsolidateFunction",
    "POWERTOOLS_SERVICE_NAME": "agent-memory",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_TRACE_DISABLED": "true",
}

# Headers that describe one hop of the connection, never passed through.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"}


def log(message: str) -> None:
    """The stack's own output (banner, one line per request, failures) goes to stderr; stdout is the functions'."""
    print(message, file=sys.stderr, flush=True)


def utc_stamp() -> str:
    """Wall-clock time for log lines (never ``MEMORY_NOW``: that freezes the service's clock, not the log's)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def env_port(name: str, default: int) -> int:
    value = os.environ.get(name, str(default))
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise SystemExit(f"{name} must be a TCP port number, not {value!r}")
    return int(value)


# --- The sandbox's environment ------------------------------------------------------------------------------


def prepare_environment() -> None:
    """Set the local defaults and make the layers importable, before any handler or boto3 client exists.

    Lambda puts a layer's content on ``sys.path`` (``/opt/python``); here each layer's ``ContentUri`` is.
    """
    for name, value in LOCAL_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    for resource in load_template()["Resources"].values():
        if resource["Type"] == "AWS::Serverless::LayerVersion":
            path = str(ROOT / resource["Properties"]["ContentUri"])
            if path not in sys.path:
                sys.path.insert(0, path)
    # Powertools warns on every handler that records no metric; locally that is noise, not a hint.
    warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)


def drop_unpublished_metrics() -> None:
    """Keep EMF blobs off the console when metrics are disabled.

    Powertools 3.37 honours ``POWERTOOLS_METRICS_DISABLED`` only in ``flush_metrics``, which then keeps the
    metric set instead of clearing it; once a metric holds 100 values, ``add_metric`` prints the EMF blob
    anyway. Lambda starts every sandbox afresh; this long-lived process clears the set after each event.
    """
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled

    if is_metrics_disabled():
        Metrics().clear_metrics()  # the metric set is shared by every Metrics instance of the process


# --- Storage --------------------------------------------------------------------------------------------------


def start_embedded_dynamodb() -> Any:
    """moto's server on a free port, unless the user points ``AWS_ENDPOINT_URL_DYNAMODB`` elsewhere.

    The variable is boto3's own, so the handlers' clients follow it without knowing about the local stack.
    """
    if os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        return None
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per DynamoDB call
    server = ThreadedMotoServer(ip_address=HOST, port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = f"http://{host}:{port}"
    return server


def ensure_tables(endpoint: str) -> list[str]:
    """Create the template's tables that the endpoint lacks; never touch one that exists (it holds data).

    Returns the names created. Waits until each is ACTIVE, so that the first request finds it usable.
    """
    import boto3
    from botocore.config import Config
    from botocore.exceptions import ClientError, EndpointConnectionError

    config = Config(connect_timeout=2, retries={"mode": "standard", "max_attempts": 3})  # fail fast if unreachable
    client = boto3.client("dynamodb", endpoint_url=endpoint, config=config)
    created = []
    try:
        for name, definition in template_tables().items():
            try:
                client.describe_table(TableName=name)
                continue
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                    raise
            client.create_table(**definition)
            client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
            created.append(name)
    except EndpointConnectionError as error:
        raise SystemExit(f"cannot reach DynamoDB at {endpoint} (AWS_ENDPOINT_URL_DYNAMODB): {error}") from error
    return created


# --- The Lambda runtime -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LambdaContext:
    """What Lambda passes as ``context``: the attributes that Powertools and the handlers read."""

    function_name: str
    memory_limit_in_mb: int
    invoked_function_arn: str
    aws_request_id: str
    deadline: float = field(repr=False)  # time.monotonic() at which Lambda would stop the function
    function_version: str = "$LATEST"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    @property
    def log_stream_name(self) -> str:
        return f"local/[$LATEST]{self.aws_request_id.replace('-', '')}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


def function_setting(function: str, name: str, default: int) -> int:
    """A function property (``Timeout``, ``MemorySize``), else the template's Globals, else SAM's default."""
    template = load_template()
    props = template["Resources"][function]["Properties"]
    globals_ = template.get("Globals", {}).get("Function", {})
    return int(props.get(name, globals_.get(name, default)))


def lambda_context(function: str, request_id: str) -> LambdaContext:
    region = os.environ["AWS_DEFAULT_REGION"]
    return LambdaContext(
        function_name=function,
        memory_limit_in_mb=function_setting(function, "MemorySize", 128),
        invoked_function_arn=f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{function}",
        aws_request_id=request_id,
        deadline=time.monotonic() + function_setting(function, "Timeout", 3),
    )


class Functions:
    """The template's functions, run in this process one event at a time, as one Lambda sandbox runs them.

    One at a time across all functions, not just per function: Powertools' resolver keeps the current
    event on a class attribute (``BaseRouter.current_event``) that every imported handler shares, so two
    events at once could read each other's body; the Logger's keys and the metric set are process-wide too.
    A slow event (a compression rewrite) therefore makes the others wait, which is fine on a laptop.
    """

    def __init__(self) -> None:
        self.names = frozenset(function_names())
        self._one_at_a_time = threading.Lock()

    def warm(self) -> None:
        """Import every handler before listening: the first request is fast and import errors show now."""
        for name in self.names:
            load_handler(name)

    def invoke(self, function: str, event: Any, request_id: str | None = None) -> Any:
        """Run one event through the function's handler; its exceptions propagate, as Lambda reports them."""
        with self._one_at_a_time:
            context = lambda_context(function, request_id or str(uuid.uuid4()))  # the timeout starts now
            try:
                return load_handler(function)(event, context)
            finally:
                drop_unpublished_metrics()


# --- HTTP plumbing shared by both servers -------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)


def json_reply(status: int, body: Any, headers: Iterable[tuple[str, str]] = ()) -> Reply:
    """A JSON reply, compact like the handlers' own."""
    body_bytes = json.dumps(body, separators=(",", ":")).encode()
    return Reply(status, body_bytes, [("Content-Type", "application/json"), *headers])


@dataclass(frozen=True)
class Answer:
    """A reply and what the request's log line says about it: ``<what> -> <status> <who>``."""

    reply: Reply
    what: str
    who: str = ""


class LocalServer(ThreadingHTTPServer):
    """A thread per request; daemon threads, so that shutdown never waits on a slow function."""

    daemon_threads = True

    def __init__(self, port: int, handler: type[RequestHandler], functions: Functions) -> None:
        super().__init__((HOST, port), handler)
        self.functions = functions

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-answer is not worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class RequestHandler(BaseHTTPRequestHandler):
    """Reads a whole request, lets ``answer`` decide, logs one line, writes the whole reply.

    http.server's own per-request log is silenced; every method goes through ``answer``.
    """

    protocol_version = "HTTP/1.1"  # keep-alive: boto3 and curl reuse connections
    server_version = "agent-memory-local"
    server: LocalServer

    def answer(self, body: bytes) -> Answer:
        """What each server does with a request whose body has been read."""
        raise NotImplementedError

    def handle_request(self) -> None:
        """Every HTTP method lands here: read, answer, one log line, reply; the connection stays open."""
        started = time.perf_counter()
        try:
            body = self.read_body()
        except ValueError:
            self.close_connection = True  # the stream is out of step with the framing; start afresh
            unreadable = json_reply(400, {"error": {"code": "bad_request", "message": "unreadable body"}})
            answer = Answer(unreadable, f"{self.command} {urlsplit(self.path).path}")
        else:
            answer = self.answer(body)
        elapsed = (time.perf_counter() - started) * 1000
        who = f" {answer.who}" if answer.who else ""
        log(f"{utc_stamp()} {answer.what} -> {answer.reply.status}{who} {elapsed:.1f}ms")
        self.send(answer.reply)  # after the log line: a client that sees the reply finds its line written

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_request

    def __getattr__(self, name: str) -> Any:
        """Any other method (TRACE, QUERY...) is routed too: API Gateway answers it, never http.server's HTML 501."""
        if name.startswith("do_"):
            return self.handle_request
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        """Silenced: ``handle_request`` writes one line per request instead."""

    def read_body(self) -> bytes:
        """The request body, by ``Content-Length`` or chunked transfer encoding (curl -T, streaming clients)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers, up to the blank line
                pass
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)


# --- The HTTP API -------------------------------------------------------------------------------------------


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
        path = urlsplit(self.path).path
        what, function = f"{self.command} {path}", ""
        if dashboard.is_dashboard(path):  # the page and its local sign-in: not API routes, not in template.yaml
            page = dashboard.answer(self.command, path, body)
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


# --- The Lambda Invoke API ----------------------------------------------------------------------------------

INVOKE_PREFIX, INVOKE_SUFFIX = "/2015-03-31/functions/", "/invocations"


def lambda_error(status: int, error_type: str, message: str) -> Reply:
    """An error of the Lambda service itself, which boto3 raises as ``client.exceptions.<error_type>``."""
    return json_reply(status, {"Type": "User", "Message": message}, [("x-amzn-ErrorType", error_type)])


def function_from_name(name: str) -> str:
    """The logical id in a FunctionName: a name, ``name:qualifier``, or a (partial) ARN, with a qualifier."""
    if ":function:" in name:
        name = name.split(":function:", 1)[1]
    return name.split(":", 1)[0]


def function_error(error: BaseException) -> dict[str, Any]:
    """The payload Lambda's Python runtime returns for an unhandled exception, its trace from the handler on."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename != __file__]
    return {
        "errorMessage": str(error),
        "errorType": type(error).__name__,
        "stackTrace": traceback.format_list(frames),
    }


class InvokeHandler(RequestHandler):
    """``POST /2015-03-31/functions/{FunctionName}/invocations``: what boto3's ``lambda.invoke`` sends."""

    def answer(self, body: bytes) -> Answer:
        path = urlsplit(self.path).path
        if not (path.startswith(INVOKE_PREFIX) and path.endswith(INVOKE_SUFFIX)):
            unknown = lambda_error(404, "UnknownOperationException", f"no such Lambda API: {path}")
            return Answer(unknown, f"{self.command} {path}")
        name = unquote(path[len(INVOKE_PREFIX) : -len(INVOKE_SUFFIX)])
        function = function_from_name(name)
        invocation_type = self.headers.get("X-Amz-Invocation-Type", "RequestResponse")
        what = f"INVOKE {function}" + ("" if invocation_type == "RequestResponse" else f" ({invocation_type})")
        if self.command != "POST":
            return Answer(lambda_error(405, "InvalidRequestContentException", "invoke with POST"), what)
        reply = self.invoke(function, name, invocation_type, body)
        return Answer(reply, what, dict(reply.headers).get("X-Amz-Function-Error", ""))

    def invoke(self, function: str, name: str, invocation_type: str, body: bytes) -> Reply:
        functions = self.server.functions
        if function not in functions.names:
            region = os.environ["AWS_DEFAULT_REGION"]
            arn = name if name.startswith("arn:") else f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{name}"
            return lambda_error(404, "ResourceNotFoundException", f"Function not found: {arn}")
        try:
            payload = json.loads(body) if body.strip() else {}
        except ValueError as error:
            message = f"Could not parse request body into json: {error}"
            return lambda_error(400, "InvalidRequestContentException", message)
        request_id = str(uuid.uuid4())
        headers = [("X-Amz-Executed-Version", "$LATEST"), ("x-amzn-RequestId", request_id)]
        if invocation_type == "DryRun":
            return Reply(204, b"", headers)
        if invocation_type == "Event":
            threading.Thread(target=run_in_background, args=(functions, function, payload), daemon=True).start()
            return Reply(202, b"", headers)
        if invocation_type != "RequestResponse":
            message = f"InvocationType must be RequestResponse, Event or DryRun, not {invocation_type!r}"
            return lambda_error(400, "InvalidParameterValueException", message)
        unhandled = [*headers, ("X-Amz-Function-Error", "Unhandled")]
        try:
            result = functions.invoke(function, payload, request_id)
        except Exception as error:  # noqa: BLE001 - whatever the function raises, Lambda reports it
            log(f"{function} raised:\n{traceback.format_exc().rstrip()}")
            return json_reply(200, function_error(error), unhandled)
        try:
            return json_reply(200, result, headers)
        except (TypeError, ValueError) as error:
            marshal_error = {"errorMessage": f"Unable to marshal response: {error}", "stackTrace": []}
            return json_reply(200, {**marshal_error, "errorType": "Runtime.MarshalError"}, unhandled)


def run_in_background(functions: Functions, function: str, payload: Any) -> None:
    """An ``Event`` invocation: nobody waits for it, so its failure can only be logged."""
    try:
        functions.invoke(function, payload)
    except Exception:  # noqa: BLE001 - the thread's last stop: report, never kill the stack
        log(f"{utc_stamp()} {function} (Event) raised:\n{traceback.format_exc().rstrip()}")


# --- Start and stop -----------------------------------------------------------------------------------------


def serve(handler: type[RequestHandler], port: int, functions: Functions) -> LocalServer:
    """Bind now (so a taken port fails at startup) and serve on a daemon thread."""
    try:
        server = LocalServer(port, handler, functions)
    except OSError as error:
        raise SystemExit(f"cannot listen on {HOST}:{port}: {error.strerror}") from error
    serve_forever = partial(server.serve_forever, poll_interval=0.1)  # Ctrl-C answered within 0.1 s
    threading.Thread(target=serve_forever, name=f"{handler.__name__}:{port}", daemon=True).start()
    return server


def banner(
    api: LocalServer, invoke: LocalServer, endpoint: str, embedded: bool, created: list[str], indexer: str | None = None
) -> str:
    api_url = f"http://{HOST}:{api.server_address[1]}"
    lines = [f"Local stack of {ROOT / 'template.yaml'}", f"  HTTP API       {api_url}"]
    lines += [f"    {route.method:<6} {route.path:<28} -> {route.function}" for route in api_routes()]
    lines.append(f"  Dashboard      {api_url}/dashboard/  (development sign-in: any user id)")
    lines.append(f"  Lambda Invoke  http://{HOST}:{invoke.server_address[1]}  ({', '.join(function_names())})")
    storage = "embedded moto" if embedded else "AWS_ENDPOINT_URL_DYNAMODB"
    tables = f"created {', '.join(created)}" if created else "tables already there, kept"
    lines.append(f"  DynamoDB       {endpoint}  ({storage}; {tables})")
    if indexer is not None:
        lines.append(f"  Indexer        stream of MemoryTable -> IndexerFunction -> {indexer}")
    lines.append("Ready. Ctrl-C to stop.")
    return "\n".join(lines)


def start_stream_mapping(endpoint: str, functions: Functions) -> Any:
    """With ``OPENSEARCH_ENDPOINT`` set, IndexerFunction follows the table's stream, as its mapping does in AWS."""
    opensearch = os.environ.get("OPENSEARCH_ENDPOINT", "").strip()
    if not opensearch:
        return None
    from local.stream_mapping import LocalStreamMapping

    mapping = LocalStreamMapping(endpoint, lambda event: functions.invoke("IndexerFunction", event))
    mapping.start()
    return mapping


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM unwinds the main thread like Ctrl-C does, so the same cleanup runs and the exit code is 0."""
    raise SystemExit(0)


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    prepare_environment()
    api_port, lambda_port = env_port("MEMORY_API_PORT", 3000), env_port("MEMORY_LAMBDA_PORT", 3001)
    # A function that invokes another (the dashboard starting a consolidation run) reaches this stack.
    os.environ.setdefault("AWS_ENDPOINT_URL_LAMBDA", f"http://{HOST}:{lambda_port}")
    moto_server = None
    servers: list[LocalServer] = []
    stream_mapping = queue_mapping = None
    try:
        moto_server = start_embedded_dynamodb()
        endpoint = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
        created = ensure_tables(endpoint)
        functions = Functions()
        functions.warm()
        stream_mapping = start_stream_mapping(endpoint, functions)  # before the first request can write
        if moto_server is not None:  # the consolidation queue lives on the embedded moto (local/sqs_mapping.py)
            from local.sqs_mapping import start_queue_mapping

            queue_mapping = start_queue_mapping(endpoint, functions)
        servers.append(serve(ApiHandler, api_port, functions))
        servers.append(serve(InvokeHandler, lambda_port, functions))
        indexer = os.environ["OPENSEARCH_ENDPOINT"] if stream_mapping is not None else None
        log(banner(servers[0], servers[1], endpoint, moto_server is not None, created, indexer))
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        if stream_mapping is not None:
            stream_mapping.stop()
        if queue_mapping is not None:
            queue_mapping.stop()
        for server in servers:
            server.shutdown()
            server.server_close()
        if moto_server is not None:
            moto_server.stop()
        if servers:
            log("Local stack stopped.")


if __name__ == "__main__":
    main()
