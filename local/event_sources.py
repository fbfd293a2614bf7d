"""Event sources: what, in AWS, calls a function without a request (a table's stream; EventBridge's schedule
is left to the operator's Invoke, as ``sam local`` leaves it)."""

from __future__ import annotations

import os
from typing import Any

from local.functions import Functions


def start_stream_mapping(endpoint: str, functions: Functions) -> Any:
    """With ``OPENSEARCH_ENDPOINT`` set, IndexerFunction follows the table's stream, as its mapping does in AWS."""
    opensearch = os.environ.get("OPENSEARCH_ENDPOINT", "").strip()
    if not opensearch:
        return None
    from local.stream_mapping import LocalStreamMapping

    mapping = LocalStreamMapping(endpoint, lambda event: functions.invoke("IndexerFunction", event))
    mapping.start()
    return mapping
