"""The dashboard's "Your data" tab (docs/api.md §6) in Chromium: usage against the quotas, what the agent
sees, the turns it was shown, Export (a download) and Erase (only after typing the memory's name)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.support.dashboard import Site, assert_accessible, expect, sign_in
from tests.support.stack import memory_context, remember

pytestmark = pytest.mark.slow


def open_data(page: Any) -> Any:
    page.get_by_role("tab", name="Your data").click()
    expect(page.get_by_role("tab", name="Your data")).to_have_attribute("aria-selected", "true")
    return expect


def test_usage_preview_turns_export_and_a_typed_erase(page: Any, site: Site, tmp_path: Any) -> None:
    context = {"user_id": "u-data", "thread_id": "t-data", "visibility": "private"}
    assert remember(site.stack, context, "Prefers window seats").status == 201
    turn = memory_context(site.stack, context)
    assert turn.status == 200
    deadline = time.monotonic() + 15  # the injection record is written off the turn's path, within seconds
    while not site.api("GET", "/v1/memory/personal/injections", user="u-data").body["injections"]:
        assert time.monotonic() < deadline, "the turn's injection record was never written"
        time.sleep(0.2)
    sign_in(page, site, "u-data")

    expect = open_data(page)
    expect(page.get_by_text("Notes written today: 1 of 500")).to_be_visible()
    sees = page.locator("#agent-sees")
    expect(sees).to_contain_text("] Prefers window seats")
    # Byte for byte what /v1/context gives the model: the instructions and the <memory_document> wrapper included.
    assert sees.text_content() == turn.body["system_prompt"]
    assert "<memory_document" in turn.body["system_prompt"] and "<recent_memory_notes>" in turn.body["system_prompt"]
    expect(page.locator("#injections")).to_contain_text("thread t-data")
    assert_accessible(page)

    with page.expect_download() as download:
        page.get_by_role("button", name="Export").click()
    exported = json.loads(download.value.path().read_text())
    assert exported["format"] == "agent-memory-export/1"
    assert [note["text"] for note in exported["notes"]] == ["Prefers window seats"]
    expect(page.locator("#data-status")).to_have_text("Exported 1 note and 0 versions.")

    erase = page.get_by_role("button", name="Erase my memory")
    confirm = page.get_by_label("To erase my memory, type my memory")  # the label names what to type, and only it
    expect(erase).to_be_disabled()
    for almost in ("my memor", "erase my memory", "(erase my memory)"):
        confirm.fill(almost)
        expect(erase).to_be_disabled()
    confirm.fill("my memory")
    erase.click()
    expect(page.locator("#data-status")).to_contain_text("Erased 1 note, 0 versions and")
    expect(page.get_by_text("Characters stored: 0 of 2,000,000")).to_be_visible()
    assert site.api("GET", "/v1/memory/personal/notes", user="u-data").body["days"] == []
    assert_accessible(page)


def test_a_member_erases_only_their_notes_and_sees_where_notes_came_from(page: Any, site: Site) -> None:
    for user in ("u-m1", "u-m2"):
        context = {"user_id": user, "thread_id": f"t-{user}", "visibility": "shared", "workspace_id": "w-data"}
        assert remember(site.stack, context, f"written by {user}").status == 201
    sign_in(page, site, "u-m1", "w-data", path="w-data/workspace-settings/team-memory?tab=notes")
    from playwright.sync_api import expect

    expect(page.locator(".note", has_text="written by u-m2")).to_contain_text("from thread t-u-m2")

    open_data(page)
    expect(page.get_by_role("button", name="Erase this workspace")).to_have_count(0)  # not an operator
    page.get_by_label("To erase my notes, type w-data").fill("w-data")
    page.get_by_role("button", name="Erase my notes").click()
    expect(page.locator("#data-status")).to_contain_text("Erased 1 note, 0 versions and")
    listed = site.api("GET", "/v1/memory/workspaces/w-data/notes", user="u-m2", workspaces=("w-data",)).body
    assert [note["text"] for day in listed["days"] for note in day["notes"]] == ["written by u-m2"]
    assert_accessible(page)
