"""Listing a document's versions reads their metadata only (issue 15, "Also"): the Query projects every
attribute but ``content``, and ``chars`` comes from the version item; a version saved before ``chars`` was
stored is still listed with its length."""

from __future__ import annotations

from typing import Any

from agent_memory.domain.scope import Scope
from agent_memory.storage.keys import version_sk
from tests.support.faults import ScriptedClient, provide_clients
from tests.support.management import USER, local_auth, manage  # noqa: F401 - its autouse fixture
from tests.support.scopes import private

LONG = "# Me\n" + "- prefers tea in the afternoon\n" * 300


def test_the_listing_reads_no_content_and_answers_each_versions_length(call, aws):
    call("update_memory", {"context": private(), "arguments": {"content": LONG}})
    call("update_memory", {"context": private(), "arguments": {"content": "short"}})
    read: list[dict[str, Any]] = []

    def query(real: Any, **request: Any) -> Any:
        answer = real(**request)
        read.extend(answer["Items"])
        return answer

    provide_clients(lambda client: ScriptedClient(client, query=query))

    listed = manage("personal_versions", token=USER, query={"limit": 10}).body["versions"]

    assert [(v["version"], v["chars"]) for v in listed] == [(2, len("short")), (1, len(LONG))]
    assert read and all("content" not in item for item in read)


def test_a_version_saved_before_chars_was_stored_is_listed_with_its_length(call, aws):
    call("update_memory", {"context": private(), "arguments": {"content": LONG}})
    key = {"pk": {"S": Scope("personal", "u-1").key}, "sk": {"S": version_sk(1)}}
    aws.update_item(TableName="MemoryTable", Key=key, UpdateExpression="REMOVE chars")

    listed = manage("personal_versions", token=USER, query={"limit": 10}).body["versions"]

    assert [(v["version"], v["chars"]) for v in listed] == [(1, len(LONG))]
