"""The dashboard's views of issue 18 in Chromium: a side-by-side diff of any two versions and of the editor's
text against the server's after a 409, the Markdown preview, times in the browser's time zone with the UTC
instant on hover, and a note's origin linked to the turns it was injected into. Stored text is untrusted:
markup or a script in a document or a note shows as text, everywhere (docs/api.md §6)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.dashboard import Site, assert_accessible, editor, expect, open_notes, sign_in
from tests.support.stack import memory_context, remember

pytestmark = pytest.mark.slow

HOSTILE = '<img src="x" onerror="window.__pwned = 1"><script>window.__pwned = 2</script>'


def put(site: Site, user: str, content: str, version: int) -> None:
    answer = site.api(
        "PUT", "/v1/memory/personal/document", {"content": content, "expected_version": version}, user=user
    )
    assert answer.status == 200, answer.body


def assert_not_run(page: Any) -> None:
    """No stored markup became an element, and no stored script ran."""
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("main img, main script").count() == 0


def test_any_two_versions_side_by_side(page: Any, site: Site) -> None:
    put(site, "u-diff", "# Memory\n- Lives in Lisbon\n- Likes tea", 0)
    put(site, "u-diff", f"# Memory\n- Lives in Porto\n- Likes tea\n- {HOSTILE}", 1)
    put(site, "u-diff", "# Memory\n- Lives in Porto\n- Likes coffee", 2)
    sign_in(page, site, "u-diff")
    expect(editor(page)).to_have_value("# Memory\n- Lives in Porto\n- Likes coffee")
    expect(page.get_by_label("Compare version")).to_have_value("2")  # the previous one against the current
    expect(page.get_by_label("with version")).to_have_value("3")

    page.get_by_label("Compare version").select_option("1")
    page.get_by_label("with version").select_option("2")
    page.get_by_role("button", name="Compare").click()

    table = page.locator("#compare-table")
    expect(table).to_contain_text("1 line removed, 2 added")
    expect(table.locator("del")).to_have_text(["- Lives in Lisbon"])
    expect(table.locator("ins")).to_have_text(["- Lives in Porto", f"- {HOSTILE}"])  # the markup, as text
    expect(table.get_by_role("columnheader", name="Version 1")).to_be_visible()
    expect(table.get_by_role("columnheader", name="Version 2")).to_be_visible()
    expect(page.locator("#version-diff")).to_be_focused()
    assert_not_run(page)
    assert_accessible(page)

    page.get_by_label("Compare version").select_option("3")
    page.get_by_label("with version").select_option("3")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#compare-table")).to_have_text("No difference: the two texts are the same.")


def test_a_conflict_shows_the_servers_text_against_the_editors(page: Any, site: Site) -> None:
    put(site, "u-conflict-diff", "# Memory\n- first\n- kept line", 0)
    sign_in(page, site, "u-conflict-diff")
    expect(editor(page)).to_have_value("# Memory\n- first\n- kept line")
    put(site, "u-conflict-diff", f"# Memory\n- theirs {HOSTILE}\n- kept line", 1)  # meanwhile, elsewhere

    editor(page).fill("# Memory\n- mine\n- kept line\n- one more of mine")
    page.get_by_role("button", name="Save changes").click()

    diff = page.locator("#conflict-diff")
    expect(diff).to_contain_text("1 line removed, 2 added")
    expect(diff.locator("del")).to_have_text([f"- theirs {HOSTILE}"])
    expect(diff.locator("ins")).to_have_text(["- mine", "- one more of mine"])
    expect(diff.get_by_role("columnheader", name="Version 2 (saved elsewhere)")).to_be_visible()
    expect(diff.get_by_role("columnheader", name="Your text (not saved)")).to_be_visible()
    expect(editor(page)).to_have_value("# Memory\n- mine\n- kept line\n- one more of mine")
    assert_not_run(page)
    assert_accessible(page)


def test_the_markdown_preview_renders_the_editors_text_and_never_its_markup(page: Any, site: Site) -> None:
    sign_in(page, site, "u-preview")
    editor(page).fill(
        "# About the user\n\nWorks in **Lisbon**, prefers `ISO` dates.\n\n"
        "- Trips\n  - Porto on *Friday*\n- [Handbook](https://example.com/handbook)\n"
        "- [trap](javascript:window.__pwned=3)\n\n"
        f"{HOSTILE}\n\n```\n<b>code stays code</b>\n```"
    )
    toggle = page.get_by_role("button", name="Show preview")
    toggle.click()

    preview = page.get_by_role("region", name="Preview of the document")
    expect(page.get_by_role("button", name="Hide preview")).to_have_attribute("aria-expanded", "true")
    expect(preview.get_by_role("heading", name="About the user", level=4)).to_be_visible()
    expect(preview.locator("strong")).to_have_text("Lisbon")
    expect(preview.locator("p code")).to_have_text("ISO")
    expect(preview.locator("ul ul li em")).to_have_text("Friday")  # the nested item
    expect(preview.get_by_role("link", name="Handbook")).to_have_attribute("href", "https://example.com/handbook")
    expect(preview.get_by_role("link")).to_have_count(1)  # javascript: is no link
    expect(preview).to_contain_text("[trap](javascript:window.__pwned=3)")
    expect(preview).to_contain_text(HOSTILE)
    expect(preview.locator("pre code")).to_have_text("<b>code stays code</b>")
    assert preview.locator("b, img, script").count() == 0
    assert_not_run(page)
    assert_accessible(page)

    editor(page).fill("## Changed")  # the preview follows the editor
    expect(preview.get_by_role("heading", level=5)).to_have_text("Changed")


@pytest.fixture
def tokyo_page(playwright_browser: Any, site: Site) -> Iterator[Any]:
    """A browser in Tokyo (UTC+9, no daylight saving): local times differ from UTC by the day's hours."""
    context = playwright_browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo")
    page = context.new_page()
    site.admit(page)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(15_000)
    yield page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def test_times_are_local_with_the_utc_instant_on_hover(tokyo_page: Any, site: Site) -> None:
    page = tokyo_page
    put(site, "u-tokyo", "# Tokyo user", 0)  # saved at the stack's frozen clock, 10:15 UTC
    assert (
        remember(site.stack, {"user_id": "u-tokyo", "thread_id": "t-1", "visibility": "private"}, "A note").status
        == 201
    )
    sign_in(page, site, "u-tokyo")
    version = page.locator("#document-version time")
    expect(version).to_have_text("2026-12-03 19:15 GMT+9")
    expect(version).to_have_attribute("title", "2026-12-03 10:15:00 UTC")
    expect(page.locator("#versions time").first).to_have_text("2026-12-03 19:15 GMT+9")

    open_notes(page)
    first = page.locator("#notes-days .day").first.locator(".note").first.locator("time")
    expect(first).to_have_text("19:15 GMT+9")
    expect(first).to_have_attribute("title", "2026-12-03 10:15:00 UTC")
    assert_accessible(page)


def _wait_for_injections(site: Site, user: str, count: int) -> None:
    deadline = time.monotonic() + 15  # the injection record is written off the turn's path, within seconds
    while len(site.api("GET", "/v1/memory/personal/injections", user=user).body["injections"]) < count:
        assert time.monotonic() < deadline, "the turns' injection records were never written"
        time.sleep(0.2)


def test_a_notes_origin_and_the_turns_it_was_injected_into(page: Any, site: Site) -> None:
    origin = {"user_id": "u-origin", "thread_id": "t-origin", "visibility": "private"}
    assert remember(site.stack, origin, f"Prefers aisle seats {HOSTILE}").status == 201
    for thread in ("t-origin", "t-later"):
        assert memory_context(site.stack, {**origin, "thread_id": thread}).status == 200
    _wait_for_injections(site, "u-origin", 2)
    sign_in(page, site, "u-origin")
    open_notes(page)

    note = page.locator(".note", has_text="Prefers aisle seats")
    expect(note.locator(".note-text")).to_have_text(f"Prefers aisle seats {HOSTILE}")
    expect(note.get_by_role("link", name="from thread t-origin")).to_be_visible()
    seen = note.get_by_role("button", name="Turns that saw it: Prefers aisle seats")
    seen.click()
    expect(seen).to_have_attribute("aria-expanded", "true")
    turns = note.get_by_role("region", name="Turns that saw the note")
    expect(turns).to_contain_text("Put in front of the model in 2 turns:")
    expect(turns.get_by_role("link")).to_have_text(["thread t-later", "thread t-origin"])  # newest first
    assert_not_run(page)
    assert_accessible(page)

    turns.get_by_role("link", name="thread t-later").click()
    expect(page.get_by_role("tab", name="Your data")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("heading", name="Turns of thread t-later and what they were shown")).to_be_visible()
    expect(page.locator("#injections li")).to_have_count(1)
    expect(page.locator("#injections")).to_contain_text("thread t-later: document version 0, notes 2026-12-03.1")
    assert_accessible(page)

    page.get_by_role("link", name="Show the turns of every thread").click()
    expect(page.locator("#injections li")).to_have_count(2)
    page.goto(site.url + "memory?tab=notes")  # signed in still: the token is in this tab's sessionStorage
    page.locator(".note", has_text="Prefers aisle seats").get_by_role("link", name="from thread t-origin").click()
    expect(page.get_by_role("heading", name="Turns of thread t-origin and what they were shown")).to_be_visible()
    expect(page.locator("#injections li")).to_have_count(1)
    assert_not_run(page)
