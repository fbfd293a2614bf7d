"""Export cursors are checked, not echoed (docs/people.md "Export"): a ``next_cursor`` whose instant is not
one this service wrote (forged text, the future, over a week old) or whose key is not of its phase is a 422."""

from __future__ import annotations

import base64
import json

import pytest

from tests.support.management import USER, local_auth, manage  # noqa: F401 - the fixture applies here
from tests.support.scopes import private


def export(cursor=None):
    return manage(
        "personal_export", path="/v1/memory/personal/export", token=USER, query={"cursor": cursor} if cursor else None
    )


def forged(**fields) -> str:
    data = {"p": "v", "a": None, "t": "2026-12-03T10:15:00.000Z", **fields}
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def test_a_cursor_of_this_service_pages_on(call, aws):
    call("remember", {"context": private(), "arguments": {"text": "a fact"}})
    first = export()

    second = export(first.body["next_cursor"])

    assert second.status == 200
    assert second.body["exported_at"] == first.body["exported_at"]
    assert [note["text"] for note in second.body["notes"]] == ["a fact"]


@pytest.mark.parametrize(
    "fields",
    [
        {"t": "<script>alert(1)</script>"},
        {"t": "2026-12-03T10:15:00Z"},  # not the format this service writes
        {"t": "2027-01-01T00:00:00.000Z"},  # the future (the tests' clock is 2026-12-03T10:15Z)
        {"t": "2026-11-20T10:15:00.000Z"},  # over a week old
        {"a": "idem#remember#key-1"},  # a key of no export phase
        {"p": "n", "a": "doc#v#0000000001"},  # a version key in the notes phase
    ],
)
def test_a_forged_cursor_is_422_and_nothing_of_it_is_echoed(aws, fields):
    answer = export(forged(**fields))

    assert answer.status == 422
    assert answer.body["error"]["code"] == "invalid_input"
    assert "script" not in json.dumps(answer.body)
