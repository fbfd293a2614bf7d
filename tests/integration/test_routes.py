"""``GET /v1/tools``, ``GET /v1/health`` and what happens off the routes."""

from __future__ import annotations

from tests.support.events import load_event


def test_tools_lists_three_tools_with_strict_json_schemas(call):
    answer = call("list_tools")

    assert answer.status == 200
    tools = {tool["name"]: tool for tool in answer.body["tools"]}
    assert set(tools) == {"remember", "update_memory", "recall"}
    for tool in tools.values():
        assert tool["description"]
        assert tool["parameters"]["type"] == "object"
        assert tool["parameters"]["additionalProperties"] is False
    assert tools["remember"]["parameters"]["required"] == ["text"]
    assert tools["update_memory"]["parameters"]["required"] == ["content"]
    recall = tools["recall"]["parameters"]
    assert recall["required"] == ["query"]
    assert (
        recall["properties"]["k"]["minimum"],
        recall["properties"]["k"]["maximum"],
        recall["properties"]["k"]["default"],
    ) == (1, 20, 8)


def test_health(call):
    answer = call("health")

    assert (answer.status, answer.body) == (200, {"status": "ok"})


def test_an_unknown_route_is_a_404_with_the_error_shape(aws, lambda_context):
    from local.template import load_handler

    event = load_event("list_tools")
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/v1/nope"

    result = load_handler("ToolsFunction")(event, lambda_context)

    assert result["statusCode"] == 404
    assert '"code":"not_found"' in result["body"].replace(" ", "")
