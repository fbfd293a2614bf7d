"""``/v1/context`` against its floor with DynamoDB in another process (a moto server over HTTP), as in AWS.

In-process, moto serves every request inside the interpreter that runs the turn, so requests made at once
still take turns for the GIL; against a server only their client side does. Here the turn's requests go to
a moto server of its own, and three things are timed in alternating blocks, after a warm-up:

- the turn as it is: its two reads at once, then its record's PutItem, which starts as soon as what it
  records is known and is in flight while the answer is built (``people.injections``);
- its floor: the same three requests as bare boto3 calls (``bench.floors.context_floor``), nothing else;
- the turn without its record, which the record cannot match: the PutItem records what the two reads
  returned, so it is a third round trip after them, however early it starts.

Run alone with ``python -m bench.people_context [--calls N] [--block N]``; ``bench.people`` runs it too.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from typing import Any

from bench.report import write_section
from bench.runner import REPORT, clear_metrics, create_tables, percentile_ms, quiet_powertools
from local.processes import stop

WARMUP = 100  # the server and its connections settle: the first block must not pay for them


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def moto_server() -> Iterator[str]:
    """A moto server in a process of its own, this process's DynamoDB endpoint meanwhile."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    before = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    try:
        for _ in range(400):
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()  # noqa: S310 - loopback
                break
            except OSError:
                time.sleep(0.05)
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = endpoint
        yield endpoint
    finally:
        if before is None:
            os.environ.pop("AWS_ENDPOINT_URL_DYNAMODB", None)
        else:
            os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = before
        stop(server, timeout_s=15)


class _Unrecorded:
    """A turn's record that writes nothing (the turn as it was before its record was durable)."""

    def start(self, *_: object) -> None:
        """Nothing is put."""

    def written(self) -> bool:
        return True


@contextmanager
def unrecorded() -> Iterator[None]:
    """The turns inside write no record."""
    from agent_memory import bootstrap

    real = bootstrap.Services.turn_record
    bootstrap.Services.turn_record = lambda *_a, **_k: _Unrecorded()  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        bootstrap.Services.turn_record = real  # type: ignore[method-assign]


SIDES = ("with", "floor", "without")
SECTION = "## /v1/context against its floor, DynamoDB over HTTP (run alone)"


def measure(calls: int = 400, block: int = 50) -> dict[str, float]:
    """p50 in ms of each side (``SIDES``) over ``calls`` timed calls each, in rotating blocks of ``block``."""
    import boto3

    from agent_memory import bootstrap
    from bench.floors import context_floor
    from bench.operations import CONTEXT_USER, seed_context_scope
    from bench.runner import TODAY, YESTERDAY
    from local.lambda_context import LambdaContext
    from local.template import load_handler
    from tests.support.events import load_event

    with moto_server(), quiet_powertools():
        bootstrap.reset()  # clients built from here on use the server
        client = boto3.client("dynamodb")
        create_tables(client)
        seed_context_scope(client)  # a 3,000-character document and 10 notes, as the in-process bench
        handler = load_handler("ContextFunction")
        context = {"user_id": CONTEXT_USER, "thread_id": "t-1", "visibility": "private"}
        pool = ThreadPoolExecutor(max_workers=1)
        floor = context_floor(bootstrap.services().dynamodb, f"user#{CONTEXT_USER}", (YESTERDAY, TODAY), pool)
        samples: dict[str, list[int]] = {side: [] for side in SIDES}
        try:
            for index in range(len(SIDES) * calls + WARMUP):
                side = "with" if index < WARMUP else SIDES[((index - WARMUP) // block) % len(SIDES)]
                event: Any = load_event("context", {"context": context})
                with unrecorded() if side == "without" else nullcontext():
                    begun = time.perf_counter_ns()
                    if side == "floor":
                        floor()
                    else:
                        assert handler(event, LambdaContext(function_name="ContextFunction"))["statusCode"] == 200
                    elapsed = time.perf_counter_ns() - begun
                clear_metrics()
                if index >= WARMUP:
                    samples[side].append(elapsed)
        finally:
            bootstrap.reset()
    return {side: percentile_ms(samples[side], 0.5) for side in SIDES}


def report(figures: dict[str, float]) -> str:
    return (
        f"context p50 {figures['with']:.2f} ms against its floor {figures['floor']:.2f} ms "
        f"({figures['with'] / figures['floor']:.2f}x: GetItem and Query at once, then the record's PutItem); "
        f"without the record {figures['without']:.2f} ms ({figures['with'] / figures['without']:.2f}x); "
        "DynamoDB as a moto server over HTTP"
    )


def main(argv: list[str] | None = None) -> int:
    from bench.runner import configure

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=400, help="timed context calls per side (default 400)")
    parser.add_argument("--block", type=int, default=50, help="calls per block, alternating (default 50)")
    parser.add_argument("--record", action="store_true", help="write the figures into docs/benchmarks.md")
    args = parser.parse_args(argv)
    configure()
    figures = report(measure(args.calls, args.block))
    print(figures)
    if args.record:
        preamble = (
            f"`python -m bench.people_context --calls {args.calls} --block {args.block} --record` at "
            f"{datetime.now(UTC).isoformat(timespec='seconds')}, load average {os.getloadavg()[0]:.1f} when it "
            "started; the scope of the per-turn table (a 3,000-character document, 10 notes over two days). The "
            "floor is the three requests the route must make, as bare boto3 calls: the document's GetItem on a pool "
            "thread while the notes' Query runs, then the record's PutItem, which cannot start before both have "
            "answered (it records the version and the note ids they returned). The turn starts its PutItem there "
            "too and builds its answer (the prompt, the shape, its JSON) while the put is in flight. Against the "
            "turn without its record the put is one more round trip after the reads: what it costs is that round "
            "trip less the answer's building, so the less a turn has to build, the more of it shows."
        )
        write_section(SECTION, preamble, figures, REPORT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
