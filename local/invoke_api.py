"""The Lambda Invoke API, as ``sam local start-lambda`` serves it: what boto3's ``lambda.invoke`` sends.

A payload is read with the service's own bounded reader (``agent_memory.edges.requests.reading.parse_json``), never
with a bare ``json.loads``, whose ``RecursionError`` on a payload 100,000 deep closed the connection with no
answer. A payload the reader cannot parse (not JSON at all) or refuses (nested deeper than 32, more than 10,000
keys, a repeated key, a lone surrogate, an integer of more than 18 digits) reaches the function as its text, not
as an object, so the function answers it as it answers any bad input (the flush: ``{"status": "failed"}``). (AWS
Lambda itself refuses a payload that is not JSON with a 400 ``InvalidRequestContentException`` before any
function runs; the local stack answers as the function would, so that a client sees the function's answer to
bad input whatever the bad input is.)
"""

from __future__ import annotations

import os
import threading
import traceback
import uuid
from typing import Any
from urllib.parse import unquote, urlsplit

from local import functions as functions_module
from local.environment import ACCOUNT_ID, log, utc_stamp
from local.functions import Functions
from local.httpd import Answer, Reply, RequestHandler, json_reply

INVOKE_PREFIX, INVOKE_SUFFIX = "/2015-03-31/functions/", "/invocations"
# The stack's own frames, left out of a function's stack trace as Lambda's runtime leaves its own out.
_STACK_FILES = {__file__, functions_module.__file__}


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
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename not in _STACK_FILES]
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
        from agent_memory.basics.errors import InvalidInput, MalformedRequest
        from agent_memory.edges.requests.reading import parse_json

        functions = self.server.functions
        if function not in functions.names:
            region = os.environ["AWS_DEFAULT_REGION"]
            arn = name if name.startswith("arn:") else f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{name}"
            return lambda_error(404, "ResourceNotFoundException", f"Function not found: {arn}")
        request_id = str(uuid.uuid4())
        headers = [("X-Amz-Executed-Version", "$LATEST"), ("x-amzn-RequestId", request_id)]
        unhandled = [*headers, ("X-Amz-Function-Error", "Unhandled")]
        try:
            payload = parse_json(body) if body.strip() else {}
        except (MalformedRequest, InvalidInput):  # not JSON, or out of bounds: the function refuses what is no event
            payload = body.decode("utf-8", "replace")
        if invocation_type == "DryRun":
            return Reply(204, b"", headers)
        if invocation_type == "Event":
            threading.Thread(target=run_in_background, args=(functions, function, payload), daemon=True).start()
            return Reply(202, b"", headers)
        if invocation_type != "RequestResponse":
            message = f"InvocationType must be RequestResponse, Event or DryRun, not {invocation_type!r}"
            return lambda_error(400, "InvalidParameterValueException", message)
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
