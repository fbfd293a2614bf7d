"""The service's notion of "now": real UTC time, or the frozen instant of ``MEMORY_NOW`` locally."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory.basics.settings import get_settings


def utc_now() -> datetime:
    """The current instant in UTC (``MEMORY_NOW`` when the local stack freezes the clock)."""
    frozen = get_settings().memory_now
    return frozen.astimezone(UTC) if frozen else datetime.now(UTC)


def iso(instant: datetime) -> str:
    """ISO-8601 in UTC with millisecond precision and a ``Z``: the one timestamp format we store."""
    return instant.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
