"""The injection record's per-turn cost with DynamoDB in another process (a moto server over HTTP), as in AWS.

In-process (``bench.people``), moto serves the writer thread's BatchWriteItem inside the interpreter that
runs the turns, so that work competes with them for the GIL; against DynamoDB only the request's client side
runs beside the turn. Here both the turn's requests and the record's go to a moto server of their own, and
``/v1/context`` is timed in alternating blocks with and without the record, after a warm-up.

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
from contextlib import contextmanager
from typing import Any

from bench.runner import clear_metrics, create_tables, percentile_ms, quiet_powertools
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


def measure(calls: int = 400, block: int = 50) -> tuple[float, float]:
    """``(p50 without, p50 with)`` in ms over ``calls`` timed calls each, in alternating blocks of ``block``."""
    import boto3

    from agent_memory import bootstrap
    from local.lambda_context import LambdaContext
    from local.template import load_handler
    from tests.events import load_event

    with moto_server(), quiet_powertools():
        bootstrap.reset()  # clients built from here on use the server
        create_tables(boto3.client("dynamodb"))
        handler = load_handler("ContextFunction")
        module = bootstrap.Services  # the record is written by the services the route calls
        recording = module.record_injection
        context = {"user_id": "u-people-http", "thread_id": "t-1", "visibility": "private"}
        samples: dict[bool, list[int]] = {True: [], False: []}
        try:
            for index in range(2 * calls + WARMUP):
                record = index < WARMUP or ((index - WARMUP) // block) % 2 == 1
                setattr(module, "record_injection", recording if record else (lambda *_: True))  # noqa: B010
                event: Any = load_event("context", {"context": context})
                begun = time.perf_counter_ns()
                answer = handler(event, LambdaContext(function_name="ContextFunction"))
                elapsed = time.perf_counter_ns() - begun
                assert answer["statusCode"] == 200
                clear_metrics()
                if index >= WARMUP:
                    samples[record].append(elapsed)
        finally:
            setattr(module, "record_injection", recording)  # noqa: B010
            bootstrap.reset()
    return percentile_ms(samples[False], 0.5), percentile_ms(samples[True], 0.5)


def main(argv: list[str] | None = None) -> int:
    from bench.runner import configure

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=400, help="timed context calls per side (default 400)")
    parser.add_argument("--block", type=int, default=50, help="calls per block, alternating (default 50)")
    args = parser.parse_args(argv)
    configure()
    without, with_record = measure(args.calls, args.block)
    print(
        f"context p50 without the record {without:.2f} ms, with it {with_record:.2f} ms "
        f"({with_record / without:.2f}x), DynamoDB as a moto server over HTTP"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
