"""edges.requests and domain.shapes: the bounds every request and every refusal keep (docs/api.md §6 "Bounds")."""

from __future__ import annotations

import pytest

from agent_memory.basics.errors import InvalidInput, QueryTooLong
from agent_memory.domain.shapes import MAX_DETAILS, ErrorBodyAnswer
from agent_memory.edges.requests.chat import RecallArgs, parse_arguments
from agent_memory.edges.requests.reading import MAX_KEYS, MAX_QUERY_CHARS, check_value, not_matching, parse_json
from agent_memory.edges.tool_catalog import tool_definitions


def _detail(index: int) -> dict:
    return {"loc": ["arguments", f"k{index}"], "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}


def test_twenty_details_are_answered_as_they_are():
    body = ErrorBodyAnswer.of("invalid_input", "refused", [_detail(i) for i in range(MAX_DETAILS)]).json_body()

    assert (len(body["details"]), body["error"]["message"]) == (20, "refused")


def test_more_details_are_cut_to_twenty_and_counted_in_the_message():
    body = ErrorBodyAnswer.of("invalid_input", "refused", [_detail(i) for i in range(200_000)]).json_body()

    assert body["details"] == [_detail(i) for i in range(20)]
    assert body["error"]["message"] == "refused (200,000 problems; `details` lists the first 20)"


def test_keys_are_counted_at_every_level():
    inner = {f"k{i}": 0 for i in range(MAX_KEYS // 2 - 1)}
    check_value({"a": dict(inner), "b": [dict(inner)]})  # exactly MAX_KEYS keys

    with pytest.raises(InvalidInput) as refused:
        check_value({"a": dict(inner), "b": [dict(inner), {"one": "more"}]})

    assert refused.value.details == [
        {"loc": ["body"], "msg": "a body holds at most 10,000 keys", "type": "too_many_keys"}
    ]


def test_the_reader_refuses_a_payload_100000_deep_and_reads_any_json_value():
    with pytest.raises(InvalidInput, match="deeper than 32"):
        parse_json("[" * 100_000 + "]" * 100_000)

    assert parse_json(b"[1, 2]") == [1, 2]


def test_a_refusal_names_its_first_problem_and_cuts_a_long_key():
    key = "k" * 1_000_000

    refusal = not_matching("refused", [{"loc": ("arguments", key), "msg": "Extra", "type": "extra_forbidden"}])

    assert refusal.message == f"refused: `arguments.{'k' * 64}` is not allowed"
    assert refusal.details == [{"loc": ["arguments", "k" * 64], "msg": "Extra", "type": "extra_forbidden"}]


def test_a_recall_query_over_2000_characters_is_refused_and_the_model_is_told():
    assert parse_arguments(RecallArgs, {"query": "q" * MAX_QUERY_CHARS}).query == "q" * MAX_QUERY_CHARS
    with pytest.raises(QueryTooLong) as refused:
        parse_arguments(RecallArgs, {"query": "q" * (MAX_QUERY_CHARS + 1), "k": 0})

    assert (refused.value.status, refused.value.code) == (422, "validation_error")
    recall = next(tool for tool in tool_definitions() if tool["name"] == "recall")
    assert recall["parameters"]["properties"]["query"]["maxLength"] == MAX_QUERY_CHARS
