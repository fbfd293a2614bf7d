"""Temporary: ``flush.py``'s old import path of the flush payload's parser, until the Lambda-event adapters
(``edges/events.py``, issue 19's other half) take the flush's parsing over; then this package is deleted."""

from agent_memory.edges.requests import parse_flush_request

__all__ = ["parse_flush_request"]
