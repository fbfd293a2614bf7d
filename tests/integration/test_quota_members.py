"""The daily quota of a team is per member as well as per scope, and an erase gives back what it removed
(docs/api.md §6 "Quotas"): one member cannot use up the team's day, and notes deleted or erased today no
longer count against today's quotas."""

from __future__ import annotations

from agent_memory import bootstrap
from local.token import mint
from tests.support.management import USER, local_auth, manage  # noqa: F401 - the fixture applies here
from tests.support.scopes import private, shared

MEMBER = mint("u-2", ["w-3"])


def remember(call, user, text, scope="team"):
    context = shared("w-3", user=user, thread=f"t-{user}") if scope == "team" else private(user)
    return call("remember", {"context": context, "arguments": {"text": text}})


def team_usage(token=USER):
    return manage("team_usage", path="/v1/memory/workspaces/w-3/usage", token=token).body


def test_one_member_cannot_use_up_the_teams_day(call, aws, monkeypatch, quotas):
    monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_MEMBER_DAY", "2")
    quotas(notes=5)

    mine = [remember(call, "u-1", f"fact {n}").status for n in range(3)]
    theirs = [remember(call, "u-2", f"fact {n}").status for n in range(2)]

    assert mine == [201, 201, 429]
    assert theirs == [201, 201]
    refused = remember(call, "u-1", "one more")
    assert "your 2 notes" in refused.body["error"]["message"]
    assert refused.headers.get("Retry-After")


def test_the_scope_quota_still_holds_for_the_team(call, aws, monkeypatch, quotas):
    monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_MEMBER_DAY", "10")
    quotas(notes=3)

    statuses = [remember(call, user, "fact").status for user in ("u-1", "u-2", "u-3", "u-4")]

    assert statuses == [201, 201, 201, 429]


def test_a_personal_scope_has_no_member_share(call, aws, monkeypatch, quotas):
    monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_MEMBER_DAY", "1")
    quotas(notes=3)

    assert [remember(call, "u-1", f"f{n}", scope="personal").status for n in range(3)] == [201, 201, 201]


def test_an_erase_of_my_notes_gives_todays_quota_back(call, aws, monkeypatch, quotas):
    monkeypatch.setenv("MEMORY_QUOTA_NOTES_PER_MEMBER_DAY", "2")
    quotas(notes=3)
    for user in ("u-1", "u-1", "u-2"):
        assert remember(call, user, "fact").status == 201
    assert remember(call, "u-2", "over the team's day").status == 429

    erased = manage("team_erase_my_notes", path="/v1/memory/workspaces/w-3/notes", query={"author": "me"}, token=USER)

    assert erased.status == 200 and erased.body["erased"]["notes"] == 2
    assert team_usage()["notes_today"] == 1
    assert [remember(call, user, "again").status for user in ("u-1", "u-1", "u-2")] == [201, 201, 429]


def test_a_deleted_note_gives_its_place_in_the_day_back(call, aws, quotas):
    quotas(notes=2)
    first = remember(call, "u-1", "first", scope="personal").body["note"]["id"]
    assert remember(call, "u-1", "second", scope="personal").status == 201
    assert remember(call, "u-1", "third", scope="personal").status == 429

    assert manage("personal_delete_note", path=f"/v1/memory/personal/notes/{first}", token=USER).status == 204

    assert remember(call, "u-1", "third", scope="personal").status == 201
    bootstrap.reset()
