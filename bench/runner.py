"""The benchmarks' shared runner: the environment, a fresh counted moto, the workload's texts, timing and logging.

Every area module (``operations``, ``flush``, ``cold_start``, ``consolidation``, ``load_older``,
``keyword_recall``, ``hybrid``) takes what it needs from here; ``bench.run`` only parses the options,
runs the areas in turn and writes the report.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import cache
from math import ceil
from pathlib import Path
from typing import Any, Protocol, TypeVar

from moto import mock_aws

from local.lambda_context import LambdaContext

ROOT = Path(__file__).resolve().parent.parent
LAYER = ROOT / "layers" / "shared"
RESULTS = ROOT / "docs" / "benchmarks.json"
REPORT = ROOT / "docs" / "benchmarks.md"

TABLE = "MemoryTable"
NOW = "2026-12-03T10:15:00Z"
NOW_MS = "2026-12-03T10:15:00.000Z"
TODAY, YESTERDAY = "2026-12-03", "2026-12-02"

# Set before agent_memory or a handler is imported: Powertools reads its settings when the Logger and
# Metrics of agent_memory.basics.observability are built, at import.
ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "eu-west-1",
    "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
    "MEMORY_TABLE_NAME": TABLE,
    "MEMORY_NOW": NOW,
    "POWERTOOLS_SERVICE_NAME": "agent-memory",
    "POWERTOOLS_METRICS_NAMESPACE": "AgentMemory",
    "POWERTOOLS_LOGGER_LOG_EVENT": "false",
    # Powertools' console output is not ours to time: no INFO lines, and no EMF blob printed per call.
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_METRICS_DISABLED": "true",
}
UNSET = ("MEMORY_CHAT_MODEL", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE", "POWERTOOLS_DEV")


T = TypeVar("T")

_SECTIONS = ("Preferences", "Projects", "Conventions", "People", "Open questions", "Environment")
_FACTS = (
    "Prefers metric units and ISO dates in every answer",
    "Deploys happen on Tuesdays, after the stand-up and never on a Friday",
    "The staging database is stg-eu-1; production is prod-eu-1 behind the bastion host",
    "Writes Python 3.13 with ruff and mypy; prefers dataclasses over plain dicts",
    "On-call rotation changes every Monday at 09:00 CET",
    "Wants answers short first, with the details after a blank line",
    "The quarterly report is due on the first Thursday of each quarter",
    "Uses British spelling in customer-facing documents",
    "The design review board meets every second Wednesday",
    "Avoids ORMs; raw SQL with parameterised queries only",
)
_DETAILS = (
    "confirmed twice in review",
    "mentioned while planning the migration",
    "agreed with the whole team in the retro",
    "a standing rule since the spring",
    "see the runbook for the exceptions, which are rare",
)


@cache
def document_text(chars: int, seed: int) -> str:
    """Markdown as a model curates it (headings and one-line bullets), about ``chars`` long.

    Cached so that a floor call reuses the very text its service call sent, without building it inside
    the timed region.
    """
    rng = random.Random(seed)
    lines = [f"# Memory (revision {seed})"]
    while sum(len(line) + 1 for line in lines) < chars:
        if rng.random() < 0.15:
            lines += ["", f"## {rng.choice(_SECTIONS)}"]
        else:
            lines.append(f"- {rng.choice(_FACTS)}; {rng.choice(_DETAILS)}.")
    return "\n".join(lines)[:chars]


@cache
def fact_text(index: int) -> str:
    """A note of varying length (about 50 to 250 characters), as a model passes it to ``remember``.

    Cached for the same reason as ``document_text``.
    """
    rng = random.Random(index)
    extra = "; ".join(rng.sample(_DETAILS, k=index % 4))
    return f"- {_FACTS[index % len(_FACTS)]} (noted in thread t-{index}{'; ' + extra if extra else ''})"


class RequestCounter:
    """The DynamoDB operation of every HTTP request botocore sends, retries included.

    It is registered on ``before-send.dynamodb`` of boto3's default session *before* the service builds
    its client, rather than on the client found through ``memory_service()``'s private attributes:
    botocore copies a session's handlers into every client created from it, so the counter sees each
    client the service makes (today one, from ``boto3.client``) even if that wiring changes, and it
    sees the floor's client the same way. ``before-send`` fires once per attempt, so a retry counts
    as the extra request it is. moto answers from a ``before-send`` handler as well; botocore calls
    every handler of that event, so the order of the two does not matter. While ``bodies`` is a list, each
    request's parameters are kept there too, as sent (``bench.capacity`` sizes their items).
    """

    def __init__(self) -> None:
        self._operations: list[str] = []
        self.bodies: list[tuple[str, dict[str, Any]]] | None = None

    def __call__(self, event_name: str, request: Any = None, **_: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        self._operations.append(operation)
        if self.bodies is not None:
            self.bodies.append((operation, json.loads(request.body)))

    def take(self) -> tuple[str, ...]:
        """The operations sent since the last ``take``, in order."""
        taken, self._operations = tuple(self._operations), []
        return taken


def instrumented_client(counter: RequestCounter) -> Any:
    """The floor's client, built like the service's (same factory, timeouts and retry mode) so that
    the two differ only by our code; the counter is on the session both clients come from."""
    import boto3

    from agent_memory import bootstrap
    from agent_memory.basics.settings import get_settings
    from agent_memory.storage.client import make_dynamodb_client

    boto3.setup_default_session()  # inside mock_aws, which patches the default session away
    assert boto3.DEFAULT_SESSION is not None
    boto3.DEFAULT_SESSION.events.register("before-send.dynamodb", counter)
    bootstrap.reset()  # the service builds its client on its next call, from this session
    return make_dynamodb_client(get_settings())


class Counted(Protocol):
    bodies: list[tuple[str, dict[str, Any]]] | None  # the requests' bodies, while a list (``capacity.requests_of``)

    def take(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Toolkit:
    """What ``bench.run`` lends: a fresh moto (its request counter and a client of the counted session)."""

    moto: Callable[[], AbstractContextManager[tuple[Counted, Any]]]
    fact_text: Callable[[int], str]
    log: Callable[[str], None]


@dataclass(frozen=True)
class Options:
    consolidation_model_s: float = 2.0
    load_older_passes: int = 3
    # (notes in the scope, warm-up calls, timed calls)
    recall_calls: tuple[tuple[int, int, int], ...] = (
        (100, 3, 50),
        (1000, 2, 20),
        (2000, 1, 8),
        (10_000, 1, 5),
    )


# The scale figures' name for Lambda's context (``Context("ConsolidateFunction", remaining_ms=...)``).
Context = LambdaContext


def create_tables(client: Any) -> None:
    """The tables of template.yaml, as the tests create them, but without their stream.

    moto keeps every stream record inside its table object and deep-copies that object on every
    TransactWriteItems (its rollback), so with the stream on, each write makes every later transaction
    slower (update_memory went from about 10 to over 300 ms per call over a run). A stream costs the
    writer nothing in DynamoDB, and nothing measured here reads it.
    """
    from local.template import table_definitions

    for definition in table_definitions().values():
        client.create_table(**{key: value for key, value in definition.items() if key != "StreamSpecification"})


def timed(call: Callable[[], T]) -> tuple[int, T]:
    """Nanoseconds of one call (perf_counter_ns: monotonic, and no float rounding of short spans)."""
    start = time.perf_counter_ns()
    result = call()
    return time.perf_counter_ns() - start, result


def percentile_ms(samples_ns: Iterable[int], fraction: float) -> float:
    """Nearest-rank percentile, in milliseconds (p99 of 1,000 calls is the 10th slowest)."""
    ordered = sorted(samples_ns)
    return ordered[max(0, ceil(fraction * len(ordered)) - 1)] / 1e6


@contextmanager
def quiet_powertools() -> Iterator[None]:
    """Powertools warns on every call whose handler added no metric (ManagementFunction's reads): not ours."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        yield


def clear_metrics() -> None:
    """Untimed after each call, as ``bench.run`` does: Powertools would print its metric set every 100 values."""
    from agent_memory.basics.observability import metrics

    metrics.clear_metrics()


# BatchWriteItem takes at most 25 items.
BATCH = 25


def batch_write(client: Any, items: list[dict[str, Any]]) -> None:
    """Prebuilt items, 25 per BatchWriteItem (moto processes every item; unprocessed ones are sent again)."""
    for start in range(0, len(items), BATCH):
        request: dict[str, Any] = {TABLE: [{"PutRequest": {"Item": item}} for item in items[start : start + BATCH]]}
        while request:
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}


def configure() -> None:
    """The environment of the tests (fake credentials, frozen clock, quiet Powertools) and the import paths."""
    os.environ.update(ENVIRONMENT)
    for name in UNSET:
        os.environ.pop(name, None)
    for path in (str(ROOT), str(LAYER)):
        if path not in sys.path:
            sys.path.insert(0, path)


def main_alone(
    module: str,
    doc: str,
    options: Mapping[str, Any],
    lines: Callable[[argparse.Namespace], list[str]],
    argv: list[str] | None = None,
) -> int:
    """``python -m bench.<module>``: its ``options`` (``--name``, typed as its default), the environment, then
    the lines of its report on stdout."""
    parser = argparse.ArgumentParser(prog=f"python -m bench.{module}", description=doc.splitlines()[0])
    for name, default in options.items():
        parser.add_argument(f"--{name}", type=type(default), default=default)
    args = parser.parse_args(argv)
    configure()
    print("\n".join(lines(args)))
    return 0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextmanager
def moto() -> Iterator[None]:
    """moto for one section, keeping no DynamoDB model object for moto's dashboard (``local.moto_fast``
    ``untracked_models``, as the tests' and the local stack's moto): plain moto appends every item, and every
    transaction's backup copy of its whole table, to a list it never empties, and one ``make bench`` process
    grew past the machine's 24 GB in the redaction section and was killed."""
    from local.moto_fast import untracked_models

    with mock_aws(), untracked_models():
        yield


@contextmanager
def fresh_moto() -> Iterator[tuple[RequestCounter, Any]]:
    """A moto of its own with the tables, its request counter and a client of the counted session."""
    with moto():
        counter = RequestCounter()
        client = instrumented_client(counter)
        create_tables(client)
        counter.take()
        yield counter, client


@contextmanager
def settings_environment(**values: str) -> Iterator[None]:
    """The service's settings for this section only (the runtime's caches are reset on the way in and out)."""
    from agent_memory import bootstrap

    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    bootstrap.reset()
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        bootstrap.reset()
