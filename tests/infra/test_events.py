"""events/: a sample API Gateway event for every HTTP route that template.yaml declares, each well formed
(its route key, method, path and path parameters agree), so that ``sam local invoke -e`` and the tests have
one for every route."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest

from local.template import http_routes
from tests.support.events import EVENTS


def _api_events() -> dict[Path, dict[str, Any]]:
    loaded = {path: json.loads(path.read_text()) for path in sorted(EVENTS.rglob("*.json"))}
    return {path: event for path, event in loaded.items() if event.get("version") == "2.0" and "routeKey" in event}


API_EVENTS = _api_events()


def test_every_http_route_of_the_template_has_a_sample_event():
    routes = {f"{route.method} {route.path}" for route in http_routes()}
    sampled = {event["routeKey"] for event in API_EVENTS.values()}

    assert routes - sampled == set(), "routes without an events/*.json sample"
    assert sampled - routes == set(), "sample events of routes the template does not declare"


@pytest.mark.parametrize("path", list(API_EVENTS), ids=lambda path: str(path.relative_to(EVENTS)))
def test_a_sample_event_agrees_with_itself(path):
    event = API_EVENTS[path]
    method, route = event["routeKey"].split(" ", 1)
    http = event["requestContext"]["http"]

    assert event["requestContext"]["routeKey"] == event["routeKey"]
    assert (http["method"], http["path"]) == (method, event["rawPath"])
    names = re.findall(r"\{(\w+)\}", route)
    assert sorted(event.get("pathParameters") or {}) == sorted(names)
    filled = route.format(**(event.get("pathParameters") or {}))
    assert event["rawPath"] == filled
    query = dict(parse_qsl(event["rawQueryString"]))
    assert (event.get("queryStringParameters") or {}) == query
