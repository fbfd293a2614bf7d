"""The characters quota counts what a scope stores, history included, and the history is bounded
(docs/api.md §6 "Quotas", docs/people.md): every kept version counts, and saving version N deletes version
N - 100 in the same transaction, giving its characters back."""

from __future__ import annotations

from agent_memory import bootstrap
from tests.support.management import USER, local_auth, manage  # noqa: F401 - the fixture applies here
from tests.support.scopes import private


def update(call, content):
    return call("update_memory", {"context": private(), "arguments": {"content": content}})


def usage():
    return manage("personal_document", path="/v1/memory/personal/usage", token=USER).body


def versions(aws):
    items = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p AND begins_with(sk, :v)",
        ExpressionAttributeValues={":p": {"S": "user#u-1"}, ":v": {"S": "doc#v#"}},
    )["Items"]
    return [int(item["version"]["N"]) for item in items]


def test_rewriting_the_document_cannot_store_more_than_the_quota(call, aws, quotas):
    quotas(chars=50_000)

    statuses = [update(call, f"# Plan {n}\n" + "x" * 19_500).status for n in range(20)]

    assert statuses[:2] == [200, 200]
    assert set(statuses[2:]) == {422}  # the third would store 58,500+ characters of history
    assert usage()["chars"] <= 50_000
    assert (
        sum(len(manage("personal_export", token=USER).body["versions"][i]["content"]) for i in range(2))
        == usage()["chars"]
    )


def test_the_usage_counts_every_kept_version(call, aws):
    for content in ("a" * 10, "b" * 20, "c" * 5):
        assert update(call, content).status == 200

    assert usage()["chars"] == 35


def test_the_history_keeps_the_newest_versions_and_gives_the_oldest_back(call, aws, monkeypatch):
    monkeypatch.setattr("agent_memory.memory.service.HISTORY_VERSIONS", 3)
    for number in range(1, 6):
        assert update(call, str(number) * (10 * number)).status == 200

    assert sorted(versions(aws)) == [3, 4, 5]
    assert usage()["chars"] == 30 + 40 + 50
    assert manage("personal_version", path="/v1/memory/personal/document/versions/1", token=USER).status == 404
    head = manage("personal_document", token=USER).body["document"]
    assert (head["version"], head["content"]) == (5, "5" * 50)


def test_the_history_s_last_page_says_so_when_older_versions_were_pruned(call, aws, monkeypatch):
    """The oldest kept version is not version 1 once the history is bounded: a page that ends on it is the last."""
    monkeypatch.setattr("agent_memory.memory.service.HISTORY_VERSIONS", 3)
    for number in range(1, 6):
        assert update(call, str(number)).status == 200

    whole = manage("personal_versions", token=USER, query={"limit": 3}).body
    first = manage("personal_versions", token=USER, query={"limit": 2}).body
    rest = manage("personal_versions", token=USER, query={"limit": 2, "cursor": first["next_cursor"]}).body

    assert ([v["version"] for v in whole["versions"]], whole["next_cursor"]) == ([5, 4, 3], None)
    assert ([v["version"] for v in first["versions"]], first["next_cursor"]) == ([5, 4], "4")
    assert ([v["version"] for v in rest["versions"]], rest["next_cursor"]) == ([3], None)


def test_an_erase_gives_everything_back(call, aws):
    update(call, "a" * 100)
    update(call, "b" * 100)

    assert manage("personal_erase", token=USER).status == 200

    assert usage()["chars"] == 0
    bootstrap.reset()
