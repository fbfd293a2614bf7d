"""template.yaml's vector index on the table (docs/recall-and-index.md "The table's vector index"): declared as the
code searches it, and searchable by the functions that recall, on that index only."""

from __future__ import annotations

from typing import Any

from agent_memory.storage.keys import vector_sk
from agent_memory.storage.note_items import INDEXED_VECTOR
from agent_memory.storage.vector_index import VECTOR_INDEX
from local.template import http_routes, load_template, table_definitions

RECALL_PATHS = ("/recall", "/notes/search")  # the routes whose use case is recall (edges/routes: tools, memory)


def _statements(function: str) -> list[dict[str, Any]]:
    """Every policy statement of a function, either branch of an ``!If`` included."""
    found = []
    for policy in load_template()["Resources"][function]["Properties"].get("Policies", []):
        branches = policy["Fn::If"][1:] if isinstance(policy, dict) and "Fn::If" in policy else [policy]
        found += [s for branch in branches if isinstance(branch, dict) for s in branch.get("Statement", [])]
    return found


def test_the_index_is_declared_as_the_code_searches_it() -> None:
    resource = load_template()["Resources"]["MemoryTable"]["Properties"]
    condition, [declared], absent = resource["VectorIndexes"]["Fn::If"]

    assert condition == "HasTableVectors" and absent == {"Ref": "AWS::NoValue"}
    assert declared["IndexName"] == VECTOR_INDEX and declared["VectorAttribute"] == {"AttributeName": INDEXED_VECTOR}
    assert declared["Dimensions"] == {"Ref": "EmbeddingDimensions"} and declared["DistanceFunction"] == "COSINE"
    assert declared["SearchSchema"] == [{"AttributeName": "pk", "SearchSchemaElementType": "HASH"}]
    assert declared["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert not vector_sk("2026-12-03", 1).startswith("note#")  # no notes Query reads an indexed vector
    assert table_definitions()["MemoryTable"]["VectorIndexes"][0]["IndexName"] == VECTOR_INDEX  # locally: always


def test_only_the_functions_that_recall_may_search_and_only_that_index() -> None:
    recalling = {route.function for route in http_routes() if route.path.endswith(RECALL_PATHS)}
    granted = {}
    for function, resource in load_template()["Resources"].items():
        if resource["Type"] == "AWS::Serverless::Function":
            for statement in _statements(function):
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                if any("SearchVectors" in action or action in {"dynamodb:*", "*"} for action in actions):
                    granted[function] = statement["Resource"]

    assert recalling == {"ToolsFunction", "ManagementFunction"}
    assert set(granted) == recalling
    assert all(resource == {"Fn::Sub": f"${{MemoryTable.Arn}}/index/{VECTOR_INDEX}"} for resource in granted.values())
