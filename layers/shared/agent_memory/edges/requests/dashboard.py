"""The dashboard's request bodies (docs/api.md §5): a document's save and a version's restore."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agent_memory.edges.requests.reading import StrictModel

# The version the write is based on. Its bound is described as Powertools describes the bounds of every answer
# of the dashboard (a float, ``0.0``), as the OpenAPI document always has.
ExpectedVersion = Annotated[int, Field(ge=0, json_schema_extra={"minimum": 0.0})]


class DocumentBody(StrictModel):
    content: str
    expected_version: ExpectedVersion


class RestoreBody(StrictModel):
    expected_version: ExpectedVersion
