"""One local stack (``python -m local.server``, as ``make run``) with the fake chat model, for this package's tests,
and the two flavours of every client (blocking, async, ``tests/support/clients.py``) that the tests hold to the
same assertions.

The stack is started by the end-to-end tier's own ``running_stack``; the model is ``tests/support/fake_openai.py``,
so that a flush is ``written`` as it would be in AWS with Bedrock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from agent_memory_client import ManagementClient, MemoryClient
from anyio.from_thread import BlockingPortal, start_blocking_portal

from tests.support.clients import FLUSH_SUMMARY, Flavour
from tests.support.fake_openai import FakeOpenAI, fake_openai_server
from tests.support.stack import Stack, running_stack


@pytest.fixture(scope="package")
def fake_model() -> Iterator[FakeOpenAI]:
    with fake_openai_server(reply=FLUSH_SUMMARY) as model:
        yield model


@pytest.fixture(scope="package")
def stacks(tmp_path_factory: pytest.TempPathFactory, fake_model: FakeOpenAI) -> Iterator[Callable[[str], Stack]]:
    """``stacks(flavour)``: the flavour's own stack, started on first use. The async clients' tests write the
    same users and scopes as the blocking ones', so each flavour starts from an empty stack. Without
    embeddings (``make run``'s ``local:minilm`` is off): the clients' answers are checked exactly, and a
    hybrid recall also answers the scope's other notes by meaning (tests/e2e/test_local_stack.py has it)."""
    started: dict[str, Stack] = {}
    with ExitStack() as running:

        def stack(flavour: str) -> Stack:
            if flavour not in started:
                logs = tmp_path_factory.mktemp(f"client-stack-{flavour}")
                settings = {
                    "MEMORY_CHAT_MODEL": "openai:fake",
                    "OPENAI_BASE_URL": fake_model.base_url,
                    "MEMORY_EMBEDDING_MODEL": "none",
                }
                started[flavour] = running.enter_context(running_stack(logs, **settings))
            return started[flavour]

        yield stack


@pytest.fixture
def client_stack(stacks: Callable[[str], Stack], stack_flavour: Flavour) -> Stack:
    return stacks(stack_flavour.name)


@pytest.fixture(scope="package")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal() as running:
        yield running


@pytest.fixture(params=["sync", "async"])
def flavour(request: pytest.FixtureRequest, portal: BlockingPortal) -> Flavour:
    return Flavour(request.param, portal)


@pytest.fixture
def stack_flavour(portal: BlockingPortal) -> Flavour:
    """The flavour of ``memory`` and ``dashboard``: blocking, unless a module overrides this fixture with
    ``flavour`` to run its tests with both."""
    return Flavour("sync", portal)


@pytest.fixture
def memory(client_stack: Stack, stack_flavour: Flavour) -> Iterator[MemoryClient]:
    with stack_flavour.memory(
        f"http://127.0.0.1:{client_stack.api_port}", lambda_endpoint=f"http://127.0.0.1:{client_stack.lambda_port}"
    ) as client:
        yield client


@pytest.fixture
def dashboard(client_stack: Stack, stack_flavour: Flavour) -> Any:
    """``dashboard(token)``: a management client for the stack with that token."""
    opened: list[ManagementClient] = []

    def _open(token: str) -> ManagementClient:
        opened.append(stack_flavour.management(f"http://127.0.0.1:{client_stack.api_port}", token=token))
        return opened[-1]

    yield _open
    for client in opened:
        client.close()
