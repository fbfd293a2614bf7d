"""The one loader of ``events/*.json``: realistic API Gateway v2 events, with the body swapped per test."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).resolve().parent.parent / "events"
_KEEP = object()


@cache
def _event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return event


def load_event(name: str, body: Any = _KEEP, *, raw_body: str | None = None) -> dict[str, Any]:
    """A fresh copy of ``events/<name>.json``; ``body`` (JSON-encoded) or ``raw_body`` replaces its body."""
    event = copy.deepcopy(_event(name))
    if raw_body is not None:
        event["body"] = raw_body
    elif body is not _KEEP:
        event["body"] = json.dumps(body)
    return event


def event_body(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(_event(name)["body"])
    return body
