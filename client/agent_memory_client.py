"""A small client for the chat backend: call the pre-compaction flush and never let it fail compaction.

Copy this module into the chat backend (it needs only boto3)::

    lam = flush_lambda_client()                      # once per process
    outcome = flush_before_compaction(lam, function_name, context=ctx, compaction_id=cid, messages=msgs)
    # outcome["status"] in {"written", "duplicate", "disabled", "failed"}; summarization proceeds regardless

The call is bounded by a client-side timeout (5 s by default) on top of the function's own budget, and
every problem (timeout, throttling, a missing function, a malformed answer) comes back as ``failed``.
"""

from __future__ import annotations

import json
import threading
from typing import Any

FLUSH_TIMEOUT_S = 5.0
STATUSES = {"written", "duplicate", "disabled", "failed"}


def flush_lambda_client(*, timeout_s: float = FLUSH_TIMEOUT_S, **client_kwargs: Any) -> Any:
    """A Lambda client sized for the flush: no retries (the flush is idempotent per compaction id, and a
    retry would only eat the budget) and socket timeouts within the budget."""
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=min(1.0, timeout_s), read_timeout=timeout_s, retries={"total_max_attempts": 1})
    return boto3.client("lambda", config=config, **client_kwargs)


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
