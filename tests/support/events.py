"""The one loader of ``events/*.json``: realistic API Gateway v2 events, with the body swapped per test."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).resolve().parents[2] / "events"
_KEEP = object()


@cache
def _event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return event


def _is_api_event(event: dict[str, Any]) -> bool:
    return event.get("version") == "2.0" and "routeKey" in event


def load_event(name: str, body: Any = _KEEP, *, raw_body: str | None = None) -> Any:
    """A fresh copy of ``events/<name>.json``; ``body`` (JSON-encoded) or ``raw_body`` replaces its body.

    For a direct-invoke payload (not an API Gateway event) ``body`` replaces the whole payload.
    """
    event = copy.deepcopy(_event(name))
    if not _is_api_event(event):
        return event if body is _KEEP else copy.deepcopy(body)
    if raw_body is not None:
        event["body"] = raw_body
    elif body is not _KEEP:
        event["body"] = json.dumps(body)
    return event


def event_body(name: str) -> dict[str, Any]:
    """The JSON body of an API event, or a direct-invoke payload itself (a fresh copy either way)."""
    event = _event(name)
    body: dict[str, Any] = json.loads(event["body"]) if _is_api_event(event) else copy.deepcopy(event)
    return body
