"""``/v1/context``'s two reads made at once (docs/benchmarks.md): the service's ``context`` against its floors,
in the same run: the two reads made one after the other, and the slower read alone.

Real: the service's code and the requests (moto, in-process). Simulated: the network, a fixed
``rtt_ms`` added to every DynamoDB call before it is sent (botocore's ``before-call`` event, in the calling
thread, as a round trip would be); moto's own handling is serialised, so it does not overlap.
``python -m bench.context_reads``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any


def _p50_ms(call: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(rtt_ms: float = 5.0, runs: int = 200) -> dict[str, float]:
    import boto3

    from agent_memory import bootstrap
    from agent_memory.basics.clock import utc_now
    from agent_memory.domain.commands import DocumentWrite
    from agent_memory.domain.document import Author
    from agent_memory.domain.scope import Scope
    from bench.runner import moto
    from local.template import table_definitions
    from tests.support.moto_support import atomic_moto_requests
    from tests.support.scopes import write_note

    with moto(), atomic_moto_requests():
        boto3.setup_default_session()
        assert boto3.DEFAULT_SESSION is not None
        client = boto3.client("dynamodb")
        for definition in table_definitions().values():
            client.create_table(**definition)
        bootstrap.reset()
        scope = Scope("personal", "bench-context")
        service = bootstrap.services().memory_service
        service.update_memory(DocumentWrite(scope, "# Me\n" + "- prefers tea\n" * 200, None, "tool", Author("bench")))
        for n in range(10):
            write_note(scope, utc_now() - timedelta(minutes=n), f"fact {n}: walks the dog at seven")
        boto3.DEFAULT_SESSION.events.register("before-call.dynamodb", lambda **_: time.sleep(rtt_ms / 1000))
        today = utc_now().date()

        def document() -> Any:
            return service.documents.current(scope)

        def notes() -> Any:
            return service.notes.newest_first(
                scope, first_day=(today - timedelta(days=1)).isoformat(), last_day=today.isoformat(), limit=50
            )

        service.context(scope)  # the pool's thread started, the clients warm
        return {
            "rtt_ms": rtt_ms,
            "context_p50_ms": _p50_ms(lambda: service.context(scope), runs),
            "sequential_p50_ms": _p50_ms(lambda: (document(), notes()), runs),
            "document_alone_p50_ms": _p50_ms(document, runs),
            "notes_alone_p50_ms": _p50_ms(notes, runs),
        }


def report(figures: dict[str, float]) -> list[str]:
    alone = max(figures["document_alone_p50_ms"], figures["notes_alone_p50_ms"])
    return [
        f"/v1/context's two reads at once, {figures['rtt_ms']:g} ms simulated round trip per DynamoDB call:",
        f"  context p50 {figures['context_p50_ms']:.2f} ms; the two reads one after the other"
        f" {figures['sequential_p50_ms']:.2f} ms; the slower read alone {alone:.2f} ms"
        f" (document {figures['document_alone_p50_ms']:.2f}, notes {figures['notes_alone_p50_ms']:.2f})",
        f"  context / sequential {figures['context_p50_ms'] / figures['sequential_p50_ms']:.2f}x;"
        f" context / slower read alone {figures['context_p50_ms'] / alone:.2f}x",
    ]


def main(argv: list[str] | None = None) -> int:
    from bench.runner import main_alone

    def lines(args: argparse.Namespace) -> list[str]:
        return report(measure(args.rtt_ms, args.runs))

    return main_alone("context_reads", __doc__ or "", {"rtt-ms": 5.0, "runs": 200}, lines, argv)


if __name__ == "__main__":
    raise SystemExit(main())
