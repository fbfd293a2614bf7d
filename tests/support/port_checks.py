"""Whether a store takes every call of a port as the port names it: mypy checks the DynamoDB stores where
``bootstrap`` hands them over; this checks the in-memory fakes, which mypy does not see."""

from __future__ import annotations

import inspect
from typing import Any, Protocol


def _parameters(method: Any) -> dict[str, tuple[object, bool]]:
    parameters = list(inspect.signature(method).parameters.values())[1:]  # without self
    return {p.name: (p.kind, p.default is not inspect.Parameter.empty) for p in parameters}


def mismatches(port: type, store: type) -> list[str]:
    """The port's calls (its own and those of the ports it extends) that ``store`` lacks or takes otherwise (a
    parameter's name, kind, or whether it has a default); empty when it keeps them all."""
    ports = [klass for klass in port.__mro__ if getattr(klass, "_is_protocol", False) and klass is not Protocol]
    calls = [
        name for klass in ports for name, member in vars(klass).items() if callable(member) and not name.startswith("_")
    ]
    assert calls, f"{port.__name__} names no call"
    wrong = []
    for name in calls:
        wanted = _parameters(getattr(port, name))
        given = _parameters(getattr(store, name)) if hasattr(store, name) else {}
        if {key: given.get(key) for key in wanted} != wanted:
            wrong.append(f"{store.__name__}.{name}")
    return wrong
