"""The OpenSearch tier's rule for a node that cannot be had (skipped with one line, except on CI), and its
connection, which holds a handler's requests to its function's grants in template.yaml (tests/support/iam)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from opensearchpy import AuthorizationException, RequestsHttpConnection

from tests.support.iam import refusal

START_TIMEOUT_S = 120


def unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"OpenSearch tier: {reason} (CI=true: the tier must run)")
    pytest.skip(f"OpenSearch tier skipped: {reason}")


class HeldToTemplate(RequestsHttpConnection):
    """opensearch-py's connection, each request of a running handler held to its function's ``es:ESHttp*``
    grants: a refused one fails before it is sent, with the 403 the domain answers."""

    def perform_request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        why = refusal("es", method, {"path": url})
        if why is not None:
            raise AuthorizationException(403, "security_exception", {"error": why})
        return super().perform_request(method, url, *args, **kwargs)
