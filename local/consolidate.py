"""``make consolidate [MIN_AGE_DAYS=0]``: a consolidation run now, against the running local stack.

It invokes ``ConsolidateFunction`` through the stack's Lambda Invoke API with the event the schedule would
send (its ``detail.min_age_days`` when given: ``0`` folds the notes written a minute ago, where the nightly
run waits a week), then follows the run's record in the operators' run listing, printing it each time it
changes, until the record says finished. It exits 1 when the run failed a group or could not be followed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
import uuid
from datetime import UTC, datetime
from typing import Any

from local.environment import HOST, prepare_environment


def _request(url: str, **options: Any) -> urllib.request.Request:
    """A request to the local stack: plain HTTP only (no ``file:`` or other scheme slips in by a setting)."""
    if not url.startswith(("http://", "https://")):
        raise SystemExit(f"not an http(s) URL: {url!r}")
    return urllib.request.Request(url, **options)  # noqa: S310 - the scheme is checked above


def invoke_run(lambda_url: str, min_age_days: int | None) -> dict[str, Any]:
    """``ConsolidateFunction``'s answer (the plan's counts); SystemExit with one line when the stack refuses.

    The event's ``time``, the run's "now", is to the millisecond: a note acknowledged before the run started is
    older than it (to the second, a note of the run's own second was not due, and not counted remaining)."""
    from agent_memory.basics.clock import iso  # the layer is on the path once prepare_environment has run

    event: dict[str, Any] = {
        "version": "0",
        "id": f"local-{uuid.uuid4()}",
        "detail-type": "Scheduled Event",
        "source": "agent-memory.make-consolidate",
        "time": iso(datetime.now(UTC)),
        "detail": {} if min_age_days is None else {"min_age_days": min_age_days},
    }
    url = f"{lambda_url}/2015-03-31/functions/ConsolidateFunction/invocations"
    request = _request(url, data=json.dumps(event).encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=900) as response:  # noqa: S310 - checked by _request
            body = json.loads(response.read() or b"null")
            failed = response.headers.get("X-Amz-Function-Error")
    except (urllib.error.URLError, ConnectionError) as error:
        raise SystemExit(f"no local stack answers at {lambda_url} (start it with `make run`): {error}") from None
    if failed or not isinstance(body, dict) or "run_id" not in body:
        raise SystemExit(f"ConsolidateFunction failed: {json.dumps(body)}")
    return body


def run_record(api_url: str, token: str, run_id: str) -> dict[str, Any] | None:
    """The run's record in ``GET /v1/admin/consolidation/runs`` (newest first), or None while not listed."""
    request = _request(f"{api_url}/v1/admin/consolidation/runs?limit=20", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - checked by _request
        runs = json.loads(response.read())["runs"]
    return next((run for run in runs if run["run_id"] == run_id), None)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def progress(run: dict[str, Any]) -> str:
    """One line of a run's record: where its groups are, and how they were folded."""
    folds = ", ".join(f"{count} {kind.replace('_', '-')}" for kind, count in run["folds"].items() if count)
    return (
        f"{run['status']:<8} groups {run['groups_done']}/{run['groups_planned']} done, {run['groups_failed']} failed;"
        f" notes {run['notes_consolidated']} folded, {run['notes_remaining']} left for later"
        f"; folds: {folds or 'none yet'}; tokens in/out {run['tokens']['input']}/{run['tokens']['output']}"
    )


def follow(api_url: str, token: str, run_id: str, timeout_s: float, poll_s: float = 0.5) -> dict[str, Any]:
    """Print the run's record each time it changes until it is finished; the last record."""
    deadline = time.monotonic() + timeout_s
    last: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        run = run_record(api_url, token, run_id)
        if run is not None and run != last:
            print(progress(run), flush=True)
            last = run
        if run is not None and run.get("finished_at"):
            return run
        time.sleep(poll_s)
    raise SystemExit(f"the run {run_id} did not finish within {timeout_s:.0f} s; its last record: {last}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--min-age-days", type=int, help="fold the notes at least this old (default: the stack's)")
    parser.add_argument("--api-url", default=f"http://{HOST}:3000", help="the stack's HTTP API")
    parser.add_argument("--lambda-url", default=f"http://{HOST}:3001", help="the stack's Lambda Invoke API")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for the run to finish")
    args = parser.parse_args(argv)
    if args.min_age_days is not None and args.min_age_days < 0:
        parser.error("--min-age-days must be 0 or more")
    prepare_environment()  # the layer on the path, the stack's development secret for the operator's token
    from local.token import mint

    planned = invoke_run(args.lambda_url.rstrip("/"), args.min_age_days)
    age = "the stack's minimum age" if args.min_age_days is None else f"notes at least {args.min_age_days} days old"
    groups = _count(planned.get("groups_planned", 0), "group")
    print(f"run {planned['run_id']} started ({age}): {groups} planned", flush=True)
    operator = mint("make-consolidate", [], admin=True, ttl_s=int(args.timeout) + 60)
    run = follow(args.api_url.rstrip("/"), operator, planned["run_id"], args.timeout)
    print(json.dumps(run, indent=2))
    return 1 if run["groups_failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
