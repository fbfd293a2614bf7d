"""One local stack (``python -m local.server``, as ``make run``) with the fake chat model, for this package's tests.

The stack is started by the end-to-end tier's own ``running_stack``; the model is ``tests/fake_openai.py``,
so that a flush is ``written`` as it would be in AWS with Bedrock.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from agent_memory_client import ConversationContext, ManagementClient, MemoryClient

from tests.e2e.test_local_stack import Stack, running_stack
from tests.fake_openai import FakeOpenAI, fake_openai_server

FLUSH_SUMMARY = "Planning the billing migration; open: payments sign-off from Dana."


@pytest.fixture(scope="package")
def fake_model() -> Iterator[FakeOpenAI]:
    with fake_openai_server(reply=FLUSH_SUMMARY) as model:
        yield model


@pytest.fixture(scope="package")
def client_stack(tmp_path_factory: pytest.TempPathFactory, fake_model: FakeOpenAI) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("client-stack")
    with running_stack(logs, MEMORY_CHAT_MODEL="openai:fake", OPENAI_BASE_URL=fake_model.base_url) as stack:
        yield stack


@pytest.fixture
def memory(client_stack: Stack) -> Iterator[MemoryClient]:
    with MemoryClient(
        f"http://127.0.0.1:{client_stack.api_port}", lambda_endpoint=f"http://127.0.0.1:{client_stack.lambda_port}"
    ) as client:
        yield client


@pytest.fixture
def dashboard(client_stack: Stack) -> Any:
    """``dashboard(token)``: a management client for the stack with that token."""
    opened: list[ManagementClient] = []

    def _open(token: str) -> ManagementClient:
        opened.append(ManagementClient(f"http://127.0.0.1:{client_stack.api_port}", token=token))
        return opened[-1]

    yield _open
    for client in opened:
        client.close()


def conversation_context(user: str, thread: str = "t-1", **extra: Any) -> ConversationContext:
    return ConversationContext(user_id=user, thread_id=thread, **extra)
