"""An erase's receipt under lost answers (docs/storage.md "Exactly once"): whatever write of the erase is applied
and then loses its answer (sent again by botocore, or answered 503 and the erase called again), the receipt counts
each erased item once, by kind, and the memory is empty afterwards."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.storage.client import make_dynamodb_client
from tests.support.faults import ScriptedClient, SeededLoss, wrap_clients
from tests.support.management import local_auth  # noqa: F401 - the fixture applies
from tests.support.people import delete, erasable, fill, partition
from tests.support.scopes import PERSONAL, TEAM, shared

WRITES = {"update_item", "batch_write_item", "delete_item", "put_item", "transact_write_items"}


class LoseOne(SeededLoss):
    """The real client, except that its ``nth`` write (counted over every client built) is applied and then
    answered 500 for good: botocore's retries spent, the erase answers 503 and its outcome is unknown."""

    writes = WRITES

    def __init__(self, real: Any, counter: dict[str, int], nth: int) -> None:
        super().__init__(real, random.Random(0), 1)
        self._counter, self._nth = counter, nth

    def loses(self) -> bool:
        self._counter["writes"] += 1
        return self._counter["writes"] == self._nth


def _lose_the(nth: int) -> dict[str, int]:
    counter = {"writes": 0}
    real = make_dynamodb_client
    bootstrap.provide(make_dynamodb_client=lambda *a, **k: LoseOne(real(*a, **k), counter, nth))
    bootstrap.reset()
    return counter


@pytest.fixture
def records_at_end(aws) -> Callable[[], list[dict[str, int]]]:
    """``records_at_end()``: the erase record's counts as the table holds them just before the record is removed,
    one per erase (its DeleteItem, seen once however often a fault provided before sends it again)."""

    def _spy() -> list[dict[str, int]]:
        seen: list[dict[str, int]] = []

        def _read_then_end(delete_item: Callable[..., Any], **request: Any) -> Any:
            if request["Key"]["sk"]["S"].startswith("erase#"):
                item = aws.get_item(TableName="MemoryTable", Key=request["Key"], ConsistentRead=True)["Item"]
                seen.append(
                    {kind: int(item[kind]["N"]) if kind in item else 0 for kind in ("notes", "versions", "other")}
                )
            return delete_item(**request)

        wrap_clients(lambda client: ScriptedClient(client, delete_item=_read_then_end))
        return seen

    return _spy


def test_an_erase_whose_every_write_lost_its_first_answer_counts_each_item_once(
    call, aws, lost_answers, records_at_end
):
    fill(call, notes=5)
    expected = erasable(aws, PERSONAL)
    clients = lost_answers("update_item", "batch_write_item", "delete_item")
    ends = records_at_end()

    answer = delete("/v1/memory/personal")

    assert answer.status == 200, answer.body
    # the erase mark, the record, the head, a page, its release, the end
    assert sum(client.lost for client in clients) >= 6
    assert ends == [expected]  # sent twice, the page's count is taken once
    assert answer.body["erased"] == expected
    assert partition(aws, PERSONAL) == []


def test_an_authored_erase_whose_every_write_lost_its_first_answer_counts_each_note_once(
    call, aws, lost_answers, records_at_end
):
    for user in ("u-1", "u-2", "u-1", "u-1"):
        call("remember", {"context": shared("w-3", user=user), "arguments": {"text": f"by {user}"}})
    lost_answers("update_item", "batch_write_item", "delete_item")
    ends = records_at_end()

    answer = delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"})

    assert answer.status == 200, answer.body
    assert ends == [{"notes": 3, "versions": 0, "other": 0}]
    assert answer.body["erased"] == {"notes": 3, "versions": 0, "other": 0}
    assert sum(sk.startswith("note#") for sk in partition(aws, TEAM)) == 1


def test_the_member_turns_an_authored_erase_deletes_are_counted_once_when_every_answer_was_lost_first(
    call, aws, lost_answers, records_at_end
):
    call("remember", {"context": shared("w-3"), "arguments": {"text": "by u-1"}})
    for user in ("u-1", "u-1", "u-2"):
        assert call("context", {"context": shared("w-3", user=user)}).status == 200
    lost_answers("update_item", "batch_write_item", "delete_item")
    ends = records_at_end()

    answer = delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"})

    assert answer.status == 200, answer.body
    assert ends == [{"notes": 1, "versions": 0, "other": 2}]
    assert answer.body["erased"] == {"notes": 1, "versions": 0, "other": 2}
    assert sum(sk.startswith("inj#") for sk in partition(aws, TEAM)) == 1  # u-2's


# An erase of fill(notes=5)'s memory is 7 writes: the erase mark, the record, the head, a page's count, its deletes,
# its release, the record's removal (the erase mark's last move meets no marker: the page erased it). Each in turn is
# applied and its answer lost for good.
@pytest.mark.parametrize("nth", range(1, 8))
def test_an_erase_whose_write_was_applied_and_answered_503_is_finished_by_the_next_call_counting_once(call, aws, nth):
    fill(call, notes=5)
    expected = erasable(aws, PERSONAL)
    counter = _lose_the(nth)

    first = delete("/v1/memory/personal")
    second = delete("/v1/memory/personal")

    assert counter["writes"] >= nth and first.status == 503, first.body
    assert second.status == 200, second.body
    assert partition(aws, PERSONAL) == []
    # The last write removes the record: the first call had erased everything, and a repeat answers zero counts.
    assert second.body["erased"] == (expected if nth < 7 else {"notes": 0, "versions": 0, "other": 0})


def test_a_page_held_by_another_running_erase_is_neither_counted_nor_deleted_here(call, aws):
    """Two erases of one memory at once: the second's page meets the first's and answers 503 (call again),
    rather than count items the first has counted already."""
    from agent_memory.basics.errors import StorageUnavailable

    fill(call, notes=2, versions=0)
    items = bootstrap.services().people.items
    items.begin_erase(PERSONAL, "all", "2026-12-03T10:00:00.000Z")
    key = {"pk": {"S": PERSONAL.key}, "sk": {"S": "erase#all"}}
    held = {":page": {"L": []}, ":id": {"S": "the-other-call"}}
    aws.update_item(
        TableName="MemoryTable",
        Key=key,
        UpdateExpression="SET page = :page, page_id = :id",
        ExpressionAttributeValues=held,
    )
    notes = [sk for sk in partition(aws, PERSONAL) if sk.startswith("note#")]

    with pytest.raises(StorageUnavailable):
        items.erase_page(PERSONAL, "all", notes, {"notes": len(notes)})

    record = aws.get_item(TableName="MemoryTable", Key=key)["Item"]
    assert "notes" not in record and record["page_id"] == {"S": "the-other-call"}
    assert [sk for sk in partition(aws, PERSONAL) if sk.startswith("note#")] == notes


def test_an_authored_erase_whose_give_backs_lost_their_first_answer_gives_the_counters_back_once(
    call, aws, lost_answers
):
    """The characters and the day's counts of the member's notes come back once, though each give-back is sent
    twice: it carries its page's id, and the copy meets that id on the counter's item."""
    for user in ("u-1", "u-2", "u-1", "u-1"):
        call("remember", {"context": shared("w-3", user=user), "arguments": {"text": f"noted by {user}"}})
    clients = lost_answers("update_item")

    answer = delete("/v1/memory/workspaces/w-3/notes", query={"author": "me"})

    assert answer.status == 200, answer.body
    assert sum(client.lost for client in clients) >= 4  # the erase mark twice, the page's count and release, ...
    items = aws.query(
        TableName="MemoryTable",
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": TEAM.key}},
        ConsistentRead=True,
    )["Items"]
    kept = [item["text"]["S"] for item in items if item["sk"]["S"].startswith("note#")]
    (usage,) = [item for item in items if item["sk"]["S"] == "usage"]
    (day,) = [item for item in items if item["sk"]["S"].startswith("day#")]
    assert int(usage["chars"]["N"]) == sum(map(len, kept)) == len("noted by u-2")
    assert (day["live"], day["by#u-1"], day["by#u-2"]) == ({"N": "1"}, {"N": "0"}, {"N": "1"})
