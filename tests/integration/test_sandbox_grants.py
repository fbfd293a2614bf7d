"""Calls made in forked sandboxes (the ``sandboxes`` fixture) are held to their function's policies in template.yaml
as the ``aws`` fixture's are (tests/support/iam): a refused one fails the test even where the handler degrades
past it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.faults import provide_clients
from tests.support.scopes import private


class _DeletingFirst:
    """The real client, except that each GetItem first deletes the item it reads: an action ContextFunction is
    not granted."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def get_item(self, **request: Any) -> Any:
        self._real.delete_item(TableName=request["TableName"], Key=request["Key"])
        return self._real.get_item(**request)


def test_a_call_a_sandboxs_function_is_not_granted_fails_the_test(sandboxes):
    provide_clients(_DeletingFirst)

    with pytest.raises(AssertionError, match="ContextFunction is not allowed dynamodb:DeleteItem"):
        sandboxes([("context", {"context": private()})])
