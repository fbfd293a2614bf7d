"""A small client for the chat backend: call the pre-compaction flush and never let it fail compaction.

It needs only botocore::

    lam = flush_lambda_client()                      # once per process (endpoint_url=... against make run)
    outcome = flush_before_compaction(lam, function_name, context=ctx, compaction_id=cid, messages=msgs)
    # outcome["status"] in {"written", "duplicate", "disabled", "failed"}; summarization proceeds regardless

The call is bounded by a client-side timeout (5 s by default) on top of the function's own budget, and
every problem (timeout, throttling, a missing function, a malformed answer) comes back as ``failed``.
"""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import urlsplit

FLUSH_TIMEOUT_S = 5.0
STATUSES = {"written", "duplicate", "disabled", "failed"}
LOCAL_REGION = "us-east-1"


def flush_lambda_client(
    *, timeout_s: float = FLUSH_TIMEOUT_S, endpoint_url: str | None = None, **client_kwargs: Any
) -> Any:
    """A Lambda client sized for the flush: no retries (the flush is idempotent per compaction id, and a
    retry would only eat the budget) and socket timeouts within the budget.

    In AWS it uses the standard credential chain and region (``AWS_REGION``/``AWS_DEFAULT_REGION``, the
    profile). Against the local stack (``endpoint_url="http://127.0.0.1:3001"``) the region defaults to
    the configured one or us-east-1, and the credentials to placeholders the local stack does not check:
    the call works in a shell without any AWS configuration (instead of raising ``NoRegionError``).
    """
    from botocore.config import Config
    from botocore.session import get_session

    session = get_session()
    if endpoint_url is not None and is_loopback(endpoint_url):
        client_kwargs.setdefault("region_name", session.get_config_variable("region") or LOCAL_REGION)
        client_kwargs.setdefault("aws_access_key_id", "local")  # never looked for: no instance metadata probe
        client_kwargs.setdefault("aws_secret_access_key", "local")
    config = Config(connect_timeout=min(1.0, timeout_s), read_timeout=timeout_s, retries={"total_max_attempts": 1})
    return session.create_client("lambda", config=config, endpoint_url=endpoint_url, **client_kwargs)


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this machine (the local stack), where nothing is signed."""
    host = (urlsplit(url).hostname or "").lower()
    return host in {"localhost", "::1"} or host.startswith("127.")


def _failed(reason: str) -> dict[str, Any]:
    return {"status": "failed", "note": None, "reason": reason}


def flush_before_compaction(
    lambda_client: Any,
    function_name: str,
    *,
    context: dict[str, Any],
    compaction_id: str,
    messages: list[dict[str, str]],
    timeout_s: float = FLUSH_TIMEOUT_S,
) -> dict[str, Any]:
    """Invoke FlushFunction (RequestResponse) and return its answer, or ``failed``; never raises.

    The invocation runs on its own daemon thread, so the timeout holds whatever the connection does
    (and a pre-forking web server cannot inherit a dead thread pool).
    """
    outcome: dict[str, Any] = {}

    def _invoke() -> None:
        try:
            payload = json.dumps({"context": context, "compaction_id": compaction_id, "messages": messages})
            outcome["response"] = lambda_client.invoke(
                FunctionName=function_name, InvocationType="RequestResponse", Payload=payload.encode()
            )
            outcome["answer"] = json.loads(outcome["response"]["Payload"].read())
        except Exception as error:  # noqa: BLE001 - reported below, never raised
            outcome["error"] = error

    worker = threading.Thread(target=_invoke, name="memory-flush", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        return _failed(f"no answer within {timeout_s:g} s")
    if "error" in outcome:
        return _failed(f"the flush call failed: {type(outcome['error']).__name__}")
    if outcome["response"].get("FunctionError"):
        return _failed(f"the flush function failed: {outcome['response']['FunctionError']}")
    answer = outcome["answer"]
    if not isinstance(answer, dict) or answer.get("status") not in STATUSES:
        return _failed("the flush answered in an unknown shape")
    return answer
