"""Fixtures the integration tests share: DynamoDB answers lost after the write committed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from agent_memory import bootstrap
from agent_memory.storage.client import make_dynamodb_client


class LostAnswerClient:
    """The real client, except that each operation in ``lost`` is applied but its answer never arrives (a read
    timeout after DynamoDB applied it; found by tests/load). botocore then sends it again, which is the answer
    the caller gets, or, its retries spent, raises: ``then_raise`` (an error code) plays that.

    ``tokens``: whether the engine honours a transaction's ``ClientRequestToken`` (DynamoDB does, for ten
    minutes; the tests' moto does too). Without it the retry is sent without its token, as to an engine that
    does not (a plain moto server, or a retry after the ten minutes): only the write ids make it apply once."""

    def __init__(self, real: Any, lost: set[str], then_raise: str | None, *, tokens: bool = True) -> None:
        self._real = real
        self._lost = lost
        self._then_raise = then_raise
        self._tokens = tokens
        self.lost = 0  # answers lost so far

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._real, name)
        if name not in self._lost:
            return method

        def _lost(**kwargs: Any) -> Any:
            method(**kwargs)  # applied, but its answer never arrives
            self.lost += 1
            if self._then_raise:
                raise ClientError({"Error": {"Code": self._then_raise, "Message": "injected"}}, name)
            if not self._tokens:
                kwargs.pop("ClientRequestToken", None)
            return method(**kwargs)

        return _lost


@pytest.fixture
def lost_answers(aws, monkeypatch) -> Callable[..., list[LostAnswerClient]]:
    """``lost_answers("put_item")``: every DynamoDB client built from now on loses these operations' first answer."""
    made: list[LostAnswerClient] = []

    def _inject(*operations: str, then_raise: str | None = None, tokens: bool = True) -> list[LostAnswerClient]:
        real = make_dynamodb_client

        def _losing(*a: Any, **k: Any) -> LostAnswerClient:
            made.append(LostAnswerClient(real(*a, **k), {*operations}, then_raise, tokens=tokens))
            return made[-1]

        bootstrap.provide(make_dynamodb_client=_losing)
        bootstrap.reset()
        return made

    return _inject
