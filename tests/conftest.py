"""Shared fixtures: AWS on moto with the tables of template.yaml, handlers as Lambda runs them, a context."""

from __future__ import annotations

import multiprocessing
import urllib.request
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import boto3
import botocore.loaders
import botocore.session
import pytest
from moto import mock_aws
from moto.server import ThreadedMotoServer

from agent_memory import bootstrap
from local.lambda_context import LambdaContext
from local.template import load_handler, table_definitions
from tests.support.calls import NOW, ROUTE_FUNCTIONS, Answer, Call, free_port, make_caller
from tests.support.fake_embeddings import FakeEmbeddingModel
from tests.support.iam import refuse_ungranted, refused_calls
from tests.support.moto_support import atomic_moto_requests
from tests.support.scheduling import GroupScheduling, in_handout_order

# The fixtures that test files share (none of them autouse: an autouse fixture is imported where it applies).
pytest_plugins = ["tests.support.calls", "tests.support.consolidation", "tests.support.quotas", "tests.support.stack"]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker, the items in the order the controller is to hand their groups out
    (tests/support/scheduling.py)."""
    if hasattr(config, "workerinput"):
        items[:] = in_handout_order(items)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`make test`'s ``--dist loadgroup``: each test's group (tests/support/scheduling.py) kept on one worker."""
    return GroupScheduling(config, log) if config.getvalue("dist") == "loadgroup" else None


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fake credentials, a fixed clock, no model, quiet telemetry; settings re-read for every test."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
        "MEMORY_TABLE_NAME": "MemoryTable",
        "MEMORY_NOW": NOW,
        "POWERTOOLS_SERVICE_NAME": "agent-memory",
        "POWERTOOLS_METRICS_NAMESPACE": "AgentMemory",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("MEMORY_CHAT_MODEL", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    bootstrap.reset(keep_provided=False)
    yield
    bootstrap.reset(keep_provided=False)


@cache
def _service_models() -> botocore.loaders.Loader:
    return botocore.loaders.create_loader()


def _default_session() -> None:
    """A new default boto3 session, as ``mock_aws`` wants, that reads botocore's service models from one loader
    for the whole run (each new session's own loader parsed them again: about 80 ms a test)."""
    session = botocore.session.get_session()
    session.register_component("data_loader", _service_models())
    session.register("before-parameter-build", refuse_ungranted)  # every client made from it inherits it, any service
    boto3.setup_default_session(botocore_session=session)


@pytest.fixture
def aws() -> Iterator[Any]:
    """moto with every table of template.yaml; yields a DynamoDB client to inspect the table with. A handler's
    call that its function's policies do not grant is refused as on AWS, and fails the test (tests/support/iam)."""
    refused_calls.clear()
    with atomic_moto_requests(), mock_aws():
        _default_session()
        client = boto3.client("dynamodb")
        for definition in table_definitions().values():
            client.create_table(**definition)
        yield client
    assert not refused_calls, refused_calls


@pytest.fixture
def embedder(monkeypatch: pytest.MonkeyPatch) -> FakeEmbeddingModel:
    """The named fake embedding model, and no notes index: recall is hybrid over the table's notes."""
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "openai:fake-embeddings")
    monkeypatch.delenv("OPENSEARCH_ENDPOINT", raising=False)
    bootstrap.reset()
    fake = FakeEmbeddingModel()
    bootstrap.provide(embedding_model=fake)
    return fake


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()


@pytest.fixture
def call(aws: Any, lambda_context: LambdaContext) -> Call:
    """Send a route's event (events/<name>.json, body swapped) through its function's handler."""
    return make_caller(load_handler, lambda_context)


@pytest.fixture
def sandboxes(monkeypatch: pytest.MonkeyPatch, lambda_context: LambdaContext) -> Iterator[Callable[..., list[Answer]]]:
    """Run many calls at once, each in its own process: concurrent Lambda sandboxes on one moto server.

    Processes, not threads: Powertools keeps the current event on a class attribute, so one process
    serves one event at a time, exactly as a Lambda sandbox does. On the first call the workers are
    forked (inheriting the environment the test has set by then) before the moto server starts any
    thread, and they reach it over HTTP like real clients reach DynamoDB.
    """
    for function in set(ROUTE_FUNCTIONS.values()):
        load_handler(function)  # imported once here, inherited by every forked worker
    port = free_port()
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", f"http://127.0.0.1:{port}")
    started: list[Any] = []

    def _start() -> Any:
        bootstrap.reset()
        _default_session()  # forked with it: a sandbox's calls are held to its function's grants (tests/support/iam)
        pool = multiprocessing.get_context("fork").Pool(processes=20, initializer=bootstrap.reset)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        started.extend([pool, server])
        # moto's state is per process, not per server: start from empty tables.
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/moto-api/reset", method="POST"))
        client = boto3.client("dynamodb")
        for definition in table_definitions().values():
            client.create_table(**definition)
        return pool

    def _run(calls: list[tuple[str, Any]]) -> list[Answer]:
        pool = started[0] if started else _start()
        return pool.starmap(_call_in_sandbox, [(name, body, lambda_context) for name, body in calls], chunksize=1)

    with atomic_moto_requests():  # the server runs in this process: its request handling is what is patched
        yield _run
    if started:
        pool, server = started
        pool.terminate()
        pool.join()
        server.stop()


def _call_in_sandbox(name: str, body: Any, lambda_context: LambdaContext) -> Answer:
    """One call in a sandbox. A call of its handler that its function is not granted fails the test from here, as
    in the ``aws`` fixture: the refusals are recorded in the sandbox's process, which that fixture cannot see."""
    refused_calls.clear()
    answer = make_caller(load_handler, lambda_context)(name, body)
    assert not refused_calls, refused_calls
    return answer
