"""The dashboard shows where each line of the document comes from (its notes' text and date) and strikes a
superseded note through, with a link to what replaced it: two consolidation runs on a stack of its own, the
fake model answering the edits this module scripts (the first adds two lines, the second replaces one)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local.token import mint
from tests.support.dashboard import KEYWORD, Site, assert_accessible, expect, open_notes, sign_in
from tests.support.fake_openai import fake_openai_server
from tests.support.stack import Stack, http, remember, running_stack

pytestmark = pytest.mark.slow

USER = "u-prov"
CONTEXT = {"user_id": USER, "thread_id": "t-1", "visibility": "private"}


def _run(stack: Stack) -> None:
    """A consolidation run now, as the System jobs page starts it, waited for until it is finished."""
    operator = mint("ops", [], admin=True)
    started = http(stack, "POST", "/v1/admin/consolidation/runs", token=operator)
    assert started.status == 202, started
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        runs = http(stack, "GET", "/v1/admin/consolidation/runs?limit=5", token=operator).body["runs"]
        run = next((run for run in runs if run["run_id"] == started.body["run_id"]), {})
        if run.get("finished_at"):
            assert run["groups_done"] == 1, run
            return
        time.sleep(0.2)
    pytest.fail(f"the run did not finish: {run}")


@pytest.fixture(scope="module")
def site(playwright_browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Site, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("superseded")
    edits = folder / "edits.json"
    with (
        fake_openai_server(reply="unused", edits=True, edits_file=edits) as model,
        running_stack(
            folder / "stack",
            MEMORY_CHAT_MODEL="openai:fake",
            OPENAI_BASE_URL=model.base_url,
            OPENAI_API_KEY="fake",
            MEMORY_CONSOLIDATION_MIN_AGE_DAYS="0",
            **KEYWORD,
        ) as stack,
    ):
        ids = {text: remember(stack, CONTEXT, text).body["note"]["id"] for text in ("Lives in Lisbon", "Likes tea")}
        edits.write_text(
            json.dumps(
                [
                    {"op": "add", "after": None, "text": "- Lives in Lisbon", "notes": [ids["Lives in Lisbon"]]},
                    {"op": "add", "after": None, "text": "- Likes tea", "notes": [ids["Likes tea"]]},
                ]
            )
        )
        _run(stack)
        ids["Moved to Porto"] = remember(stack, CONTEXT, "Moved to Porto").body["note"]["id"]
        replace = {"op": "replace", "line": "- Lives in Lisbon", "text": "- Lives in Porto"}
        edits.write_text(json.dumps([{**replace, "notes": [ids["Moved to Porto"]]}]))
        _run(stack)
        yield Site(stack), ids


@pytest.fixture
def folded(site: tuple[Site, dict[str, str]]) -> dict[str, str]:
    return site[1]


@pytest.fixture
def page(playwright_browser: Any, site: tuple[Site, dict[str, str]]) -> Iterator[Any]:
    """The tier's page (conftest), on this module's stack."""
    context = playwright_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    site[0].admit(page)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def test_each_line_shows_the_text_and_date_of_its_notes(page: Any, site: tuple[Site, dict[str, str]]) -> None:
    sign_in(page, site[0], USER)

    lines = page.locator("#provenance-lines > li")
    expect(lines).to_have_count(2)
    expect(lines.nth(0).locator(".line")).to_have_text("- Lives in Porto")
    expect(lines.nth(0).locator(".source")).to_have_count(1)
    expect(lines.nth(0).locator(".source")).to_contain_text("Moved to Porto")
    expect(lines.nth(0).locator(".source time")).to_have_text("2026-12-03 10:15 UTC")
    expect(lines.nth(1).locator(".source")).to_contain_text("Likes tea")
    assert_accessible(page)


def test_a_superseded_note_is_struck_through_and_links_to_what_replaced_it(page: Any, site, folded) -> None:
    sign_in(page, site[0], USER)
    open_notes(page)

    old = page.locator(f"#notes-days li[data-note-id='{folded['Lives in Lisbon']}']")
    expect(old.locator(".note-text del")).to_have_text("Lives in Lisbon")
    for current in ("Likes tea", "Moved to Porto"):
        expect(page.locator(f"#notes-days li[data-note-id='{folded[current]}'] del")).to_have_count(0)
    link = old.get_by_role("link", name="“Moved to Porto” (2026-12-03 10:15 UTC)")
    expect(link).to_be_visible()
    assert_accessible(page)

    link.click()

    expect(page.locator(f"[id='note-{folded['Moved to Porto']}']")).to_be_focused()


def test_a_line_written_by_hand_rests_on_no_note(page: Any, site: tuple[Site, dict[str, str]], tmp_path: Path) -> None:
    api = site[0]
    version = api.api("GET", "/v1/memory/personal/document", user="u-hand").body["document"]["version"]
    assert (
        api.api(
            "PUT", "/v1/memory/personal/document", {"content": "- by hand", "expected_version": version}, user="u-hand"
        ).status
        == 200
    )
    sign_in(page, api, "u-hand")

    line = page.locator("#provenance-lines > li")
    expect(line).to_have_count(1)
    expect(line.locator(".no-source")).to_have_text("Written by hand, by the agent or by a rewrite: no note.")
