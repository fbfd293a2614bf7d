"""The dashboard in a real browser (headless Chromium driven by Playwright) against the local stack.

Each test signs in through the page's own development sign-in form and works as a person would: by labels,
roles and visible text. After each view, axe-core checks it for serious or critical accessibility violations.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from local.token import mint
from tests.support.dashboard import (
    FAKE_MODEL_REPLY,
    Site,
    assert_accessible,
    editor,
    expect,
    open_notes,
    screenshots_dir,
    sign_in,
)
from tests.support.stack import remember

pytestmark = pytest.mark.slow


def dismiss_dialog(page: Any, opener: Any, name: str, text: str, dismiss: str) -> None:
    """Open a dialog with its button, check it (content, axe), dismiss it: focus is back on the button."""
    opener.click()
    dialog = page.get_by_role("dialog", name=name)
    expect(dialog).to_contain_text(text)
    assert_accessible(page)
    dialog.get_by_role("button", name=dismiss).click()
    expect(opener).to_be_focused()


# --- Curated memory -------------------------------------------------------------------------------------------


def test_edit_and_save_shows_the_count_the_version_and_a_soft_limit_warning(page: Any, site: Site) -> None:
    sign_in(page, site, "u-edit")
    expect(page.get_by_role("heading", name="My memory", level=1)).to_be_visible()
    expect(page.get_by_text("No document yet")).to_be_visible()
    assert_accessible(page)

    editor(page).fill("# About the user\n- Works in Lisbon")
    expect(page.locator("#document-count")).to_contain_text("34 / 18,000 characters")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").filter(has_text="Saved as version 1.")).to_be_visible()

    editor(page).fill("x" * 18_500)
    expect(page.locator("#document-count")).to_contain_text("over the soft limit")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#document-status")).to_contain_text("Saved as version 2.")
    expect(page.locator("#document-status")).to_contain_text("Warning:")

    page.reload()
    expect(editor(page)).to_have_value("x" * 18_500)
    expect(page.locator("#document-version")).to_contain_text("Version 2")
    stored = site.api("GET", "/v1/memory/personal/document", user="u-edit").body["document"]
    assert (stored["version"], stored["chars"]) == (2, 18_500)


def test_a_save_over_the_hard_limit_is_compressed_by_the_model_and_says_so(page: Any, site: Site) -> None:
    sign_in(page, site, "u-compress")
    editor(page).fill("y" * 25_100)
    expect(page.locator("#document-count")).to_contain_text("over the hard limit")
    page.get_by_role("button", name="Save changes").click()

    expect(page.locator("#document-status")).to_contain_text("the model compressed it")
    expect(editor(page)).to_have_value(FAKE_MODEL_REPLY)


def test_a_concurrent_edit_is_a_409_that_keeps_the_typed_text(page: Any, site: Site) -> None:
    site.api("PUT", "/v1/memory/personal/document", {"content": "- first", "expected_version": 0}, user="u-conflict")
    sign_in(page, site, "u-conflict")
    expect(editor(page)).to_have_value("- first")
    # Meanwhile the agent (or another tab) saves version 2.
    site.api("PUT", "/v1/memory/personal/document", {"content": "- theirs", "expected_version": 1}, user="u-conflict")

    editor(page).fill("- mine, typed here")
    page.get_by_role("button", name="Save changes").click()

    conflict = page.locator("#document-conflict")
    expect(conflict).to_contain_text("Changed elsewhere")
    expect(conflict).to_contain_text("no longer at version 1")
    expect(conflict).to_be_focused()
    expect(editor(page)).to_have_value("- mine, typed here")
    # History agrees with the banner: version 2 is listed and is the current one, version 1 no longer is.
    versions = page.locator("#versions li[data-version]")
    expect(versions).to_have_count(2)
    expect(versions.first).to_have_attribute("data-version", "2")
    expect(versions.first).to_contain_text("current")
    expect(versions.nth(1).get_by_text("current", exact=True)).to_have_count(0)
    expect(versions.nth(1).get_by_role("button", name="Restore version 1")).to_be_visible()
    assert_accessible(page)

    # Aside: load theirs into the editor, with mine kept beside it.
    page.get_by_role("button", name="Load the latest version (keep my text aside)").click()
    expect(editor(page)).to_have_value("- theirs")
    expect(page.get_by_label("Your unsaved text")).to_have_value("- mine, typed here")

    # Or keep mine and save it over theirs: a fresh conflict, then "Keep my text".
    site.api(
        "PUT", "/v1/memory/personal/document", {"content": "- theirs again", "expected_version": 2}, user="u-conflict"
    )
    editor(page).fill("- mine, final")
    page.get_by_role("button", name="Save changes").click()
    page.get_by_role("button", name="Keep my text (save it over theirs)").click()
    expect(editor(page)).to_have_value("- mine, final")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#document-status")).to_contain_text("Saved as version 4.")
    stored = site.api("GET", "/v1/memory/personal/document", user="u-conflict").body["document"]
    assert (stored["content"], stored["version"]) == ("- mine, final", 4)


def test_history_lists_versions_views_one_and_restores_it_after_confirming(page: Any, site: Site) -> None:
    site.api("PUT", "/v1/memory/personal/document", {"content": "- alpha", "expected_version": 0}, user="u-hist")
    site.api("PUT", "/v1/memory/personal/document", {"content": "- beta", "expected_version": 1}, user="u-hist")
    sign_in(page, site, "u-hist")
    versions = page.locator("#versions li")
    expect(versions).to_have_count(2)
    expect(versions.first).to_contain_text("v2")
    expect(versions.first).to_contain_text("current")
    expect(versions.nth(1)).to_contain_text("edited here")

    dismiss_dialog(page, page.get_by_role("button", name="View version 1"), "Version 1", "- alpha", "Close")

    restore = page.get_by_role("button", name="Restore version 1")
    restore.click()
    confirm = page.get_by_role("dialog", name="Restore version 1?")
    expect(confirm).to_be_visible()
    confirm.get_by_role("button", name="Cancel").click()
    expect(restore).to_be_focused()
    expect(editor(page)).to_have_value("- beta")

    restore.click()
    page.get_by_role("dialog", name="Restore version 1?").get_by_role("button", name="Restore").click()
    expect(page.locator("#document-status")).to_contain_text("Version 1 restored as version 3.")
    expect(editor(page)).to_have_value("- alpha")
    expect(versions).to_have_count(3)
    expect(versions.first).to_contain_text("restored from history")


# --- Recent notes ---------------------------------------------------------------------------------------------


def test_notes_by_day_newest_first_and_load_older_across_a_gap_of_empty_days(page: Any, site: Site) -> None:
    sign_in(page, site, "u-notes")
    open_notes(page)
    days = page.locator("#notes-days .day")
    expect(days).to_have_count(2)
    expect(days.nth(0).get_by_role("heading")).to_have_text("Thursday, 3 December 2026")
    expect(days.nth(0).locator(".note-text")).to_have_text(
        ["Flight to Porto on Friday morning", "Prefers metric units and ISO dates"]
    )
    expect(days.nth(0).locator(".note").first).to_contain_text("10:15 UTC")
    expect(days.nth(0).locator(".note").first).to_contain_text("remember")
    expect(days.nth(1).get_by_role("heading")).to_have_text("Wednesday, 2 December 2026")
    assert_accessible(page)

    page.get_by_role("button", name="Load older").click()  # 21 November to 1 December hold nothing
    expect(days).to_have_count(3)
    expect(days.nth(2).get_by_role("heading")).to_have_text("Friday, 20 November 2026")
    expect(days.nth(2).get_by_role("heading")).to_be_focused()
    expect(days.nth(2).locator(".note")).to_have_count(2)
    expect(page.get_by_role("button", name="Load older")).to_be_hidden()
    expect(page.get_by_text("No older notes.")).to_be_visible()


def test_search_finds_notes_and_shows_the_mode_discreetly(page: Any, site: Site) -> None:
    sign_in(page, site, "u-notes")
    open_notes(page)
    page.get_by_label("Search notes").fill("Lisbon venue")
    page.get_by_label("Search notes").press("Enter")

    results = page.locator("#search-results")
    expect(results.get_by_role("heading")).to_contain_text("1 note for “Lisbon venue”")
    expect(results.locator(".note-text")).to_have_text(["Booked the Lisbon offsite venue for March"])
    expect(results.locator(".note")).to_contain_text("2026-11-20")
    expect(page.locator("#search-mode")).to_have_text("keyword search")
    assert_accessible(page)

    page.get_by_label("Search notes").fill("   ")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#notes-error")).to_have_text("Type what to search for.")


def test_delete_asks_first_and_the_note_is_gone_at_once(page: Any, site: Site) -> None:
    sign_in(page, site, "u-del")
    open_notes(page)
    doomed = page.locator(".note", has_text="Temporary note to delete")
    delete = doomed.get_by_role("button", name="Delete note: Temporary note to delete")

    dismiss_dialog(page, delete, "Delete this note?", "Temporary note to delete", "Cancel")
    expect(doomed).to_have_count(1)

    delete.click()
    page.get_by_role("dialog", name="Delete this note?").get_by_role("button", name="Delete note").click()
    expect(doomed).to_have_count(0)
    expect(page.locator("#notes-status")).to_have_text("Note deleted.")
    expect(page.get_by_role("button", name="Delete note: A note that stays")).to_be_focused()
    listed = site.api("GET", "/v1/memory/personal/notes", user="u-del").body["days"]
    assert [note["text"] for day in listed for note in day["notes"]] == ["A note that stays"]

    page.reload()
    open_notes(page)
    expect(page.locator(".note-text")).to_have_text(["A note that stays"])


def test_a_note_deleted_elsewhere_meanwhile_shows_the_api_message(page: Any, site: Site) -> None:
    remember(site.stack, {"user_id": "u-del2", "thread_id": "t-1", "visibility": "private"}, "Soon gone elsewhere")
    sign_in(page, site, "u-del2")
    open_notes(page)
    expect(page.locator(".note-text")).to_have_text(["Soon gone elsewhere"])
    note_id = page.locator(".note").first.get_attribute("data-note-id")
    assert site.api("DELETE", f"/v1/memory/personal/notes/{note_id}", user="u-del2").status == 204  # another tab

    page.get_by_role("button", name="Delete note: Soon gone elsewhere").click()
    page.get_by_role("dialog", name="Delete this note?").get_by_role("button", name="Delete note").click()
    expect(page.locator("#notes-error")).to_have_text("this memory has no such note")
    expect(page.locator(".note")).to_have_count(0)


# --- Team memory ----------------------------------------------------------------------------------------------


def test_a_team_member_edits_team_memory_and_another_member_sees_it(
    page: Any, site: Site, playwright_browser: Any
) -> None:
    sign_in(page, site, "u-team1", "w-3 w-9")
    page.get_by_role("link", name="Team: w-3").click()
    expect(page).to_have_url(re.compile(r"/dashboard/w-3/workspace-settings/team-memory$"))
    expect(page.get_by_role("heading", name="Team memory: w-3", level=1)).to_be_visible()
    version = site.api("GET", "/v1/memory/workspaces/w-3/document", user="u-team1", workspaces=("w-3",)).body
    editor(page).fill("# Team w-3\n- Deploys on Tuesdays")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator("#document-status")).to_contain_text(f"Saved as version {version['document']['version'] + 1}.")
    open_notes(page)
    expect(page.locator(".note-text").first).to_have_text("Deploys happen on Tuesdays")
    assert_accessible(page)

    other = playwright_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        teammate = other.new_page()
        site.admit(teammate)
        sign_in(teammate, site, "u-team2", "w-3", path="w-3/workspace-settings/team-memory")
        expect(teammate).to_have_url(re.compile(r"/dashboard/w-3/workspace-settings/team-memory$"))
        expect(editor(teammate)).to_have_value("# Team w-3\n- Deploys on Tuesdays")
        expect(teammate.locator("#versions li").first).to_contain_text("u-team1")
    finally:
        other.close()


def test_a_non_member_is_refused_with_the_api_message(page: Any, site: Site) -> None:
    sign_in(page, site, "u-outsider", "w-4")
    expect(page.get_by_role("link", name="Team: w-4")).to_be_visible()
    expect(page.get_by_role("link", name="Team: w-3")).to_have_count(0)

    page.goto(site.url + "w-3/workspace-settings/team-memory")
    expect(page.get_by_role("alert").filter(has_text="you are not a member of this workspace")).to_be_visible()
    assert_accessible(page)


# --- Operators ------------------------------------------------------------------------------------------------


def test_the_operator_sees_the_runs_and_starts_one(page: Any, site: Site) -> None:
    sign_in(page, site, "ops-1", admin=True)
    page.get_by_role("link", name="System jobs").click()
    expect(page.get_by_role("heading", name="System jobs", level=1)).to_be_visible()
    expect(page.get_by_role("table", name="Consolidation runs, newest first")).to_be_visible()

    page.get_by_role("button", name="Run now").click()
    status = page.locator("#jobs-status")
    expect(status).to_contain_text("started", timeout=5_000)
    expect(status).to_contain_text("finished", timeout=60_000)
    expect(status).to_contain_text("notes consolidated")
    row = page.locator("#runs tr").first
    expect(row).not_to_contain_text("running")
    assert int(row.locator("td").nth(1).inner_text().split(" / ")[0]) >= 1  # groups done: the fake model folded them
    expect(row.locator("td").nth(3)).to_have_text("none")
    expect(row.locator("td.folds")).to_contain_text("edits")  # the fake answers the minimal cited edits
    tokens_in, tokens_out = (int(n.replace(",", "")) for n in row.locator("td.tokens").inner_text().split(" / "))
    assert tokens_in > 0 and tokens_out > 0
    assert_accessible(page)


def test_a_consolidated_version_shows_each_change_beside_the_notes_that_caused_it(page: Any, site: Site) -> None:
    sign_in(page, site, "u-notes", "w-3", admin=True)
    page.get_by_role("link", name="System jobs").click()
    page.get_by_role("button", name="Run now").click()
    expect(page.locator("#jobs-status")).to_contain_text("finished", timeout=60_000)
    listed = site.api("GET", "/v1/memory/personal/document/versions", user="u-notes").body["versions"]
    folded = next(v["version"] for v in listed if v["reason"] == "consolidation")
    edits = site.api("GET", f"/v1/memory/personal/document/versions/{folded}", user="u-notes").body["edits"]
    assert edits and all(edit["notes"] for edit in edits)

    page.goto(site.url)
    page.get_by_role("button", name=f"View version {folded}").click()
    dialog = page.get_by_role("dialog", name=f"Version {folded}")
    changes = dialog.get_by_role("region", name="Changes and the notes that caused them")
    expect(changes).to_be_visible()
    expect(changes.locator("li")).to_have_count(len(edits))
    expect(changes.locator("li").first).to_contain_text("Booked the Lisbon offsite venue for March")
    expect(changes.locator("li").first).to_contain_text(edits[0]["notes"][0])
    assert_accessible(page)


def test_system_jobs_is_for_operators_only(page: Any, site: Site) -> None:
    sign_in(page, site, "u-plain")
    expect(page.get_by_role("link", name="System jobs")).to_have_count(0)
    page.goto(site.url + "admin/system-jobs")
    expect(page.locator("#jobs-error")).to_have_text("this route is for operators (memory_admin)")


# --- Sign-in --------------------------------------------------------------------------------------------------


def test_the_development_sign_in_shows_refusals_and_deep_links_come_back(page: Any, site: Site) -> None:
    page.goto(site.url + "memory?tab=notes")
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    assert_accessible(page)
    page.get_by_label("User id").fill("not valid!")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#signin-error")).to_contain_text("the user id must be")

    page.get_by_label("User id").fill("u-deep")
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/dashboard/memory\?tab=notes$"))
    expect(page.get_by_role("tab", name="Recent notes")).to_have_attribute("aria-selected", "true")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()


def test_an_expired_token_asks_to_sign_in_and_a_refused_one_shows_the_api_message(page: Any, site: Site) -> None:
    page.goto(site.url)
    page.evaluate("token => sessionStorage.setItem('agent-memory.token', token)", mint("u-late", [], ttl_s=-3600))
    page.goto(site.url + "memory")
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()

    forged = mint("u-forged", []).rsplit(".", 1)[0] + ".bad-signature"
    page.evaluate("token => sessionStorage.setItem('agent-memory.token', token)", forged)
    page.goto(site.url + "memory")
    expect(page.locator("#main").get_by_role("alert")).to_contain_text("the token is not valid")
    banner = page.locator("#banner")
    expect(banner).to_contain_text("please sign in again")
    banner.get_by_role("link", name="Sign in").click()
    expect(page.get_by_label("User id")).to_be_visible()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_oidc_sign_in_uses_the_authorization_code_with_pkce(page: Any, site: Site) -> None:
    """config.json in "oidc" mode, and a provider played by the test: the page's real PKCE flow end to end."""
    issuer, client_id = "https://idp.example.test", "dashboard-client"
    seen: dict[str, Any] = {}
    cors = {"access-control-allow-origin": "*", "content-type": "application/json"}
    config = {"mode": "oidc", "issuer": issuer, "client_id": client_id, "api_base_url": "", "api_token": "access_token"}
    discovery = {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token"}
    context = page.context
    context.unroute("**/*")
    context.route("**/dashboard/config.json", lambda route: route.fulfill(json=config))
    context.route(
        f"{issuer}/.well-known/openid-configuration",
        lambda route: route.fulfill(body=json.dumps(discovery), headers=cors),
    )

    def authorize(route: Any) -> None:
        query = {key: values[0] for key, values in parse_qs(urlsplit(route.request.url).query).items()}
        seen["authorize"] = query
        back = f"{query['redirect_uri']}?code=the-code&state={query['state']}"
        route.fulfill(status=302, headers={"location": back})

    def token(route: Any) -> None:
        form = {key: values[0] for key, values in parse_qs(route.request.post_data or "").items()}
        seen["token"] = form
        challenge = b64url(hashlib.sha256(form["code_verifier"].encode()).digest())
        if challenge != seen["authorize"]["code_challenge"] or form["code"] != "the-code":
            route.fulfill(status=400, body=json.dumps({"error": "invalid_grant"}), headers=cors)
            return
        claims = {"iss": issuer, "aud": client_id, "sub": "u-oidc", "nonce": seen["authorize"]["nonce"]}
        id_token = f"{b64url(b'{}')}.{b64url(json.dumps(claims).encode())}.sig"
        tokens = {"id_token": id_token, "access_token": mint("u-oidc", ["w-3"]), "token_type": "Bearer"}
        route.fulfill(body=json.dumps(tokens), headers=cors)

    context.route(f"{issuer}/authorize*", authorize)
    context.route(f"{issuer}/token", token)

    page.goto(site.url + "memory")
    assert_accessible(page)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="My memory", level=1)).to_be_visible()
    expect(page.get_by_text("Signed in as u-oidc")).to_be_visible()
    expect(page.get_by_role("link", name="Team: w-3")).to_be_visible()
    sent = seen["authorize"]
    assert sent["response_type"] == "code" and sent["code_challenge_method"] == "S256"
    assert sent["client_id"] == client_id and sent["redirect_uri"].endswith("/dashboard/callback")
    assert len(seen["token"]["code_verifier"]) >= 43 and seen["token"]["grant_type"] == "authorization_code"

    # An answer that does not belong to a sign-in started here is refused.
    page.goto(site.url + "callback?code=the-code&state=forged")
    expect(page.get_by_role("alert")).to_contain_text("state mismatch")


def test_the_pkce_challenge_is_base64url_sha256_of_the_verifier(page: Any, site: Site) -> None:
    page.goto(site.url)
    verifier = "dBjftJeZ4CVP-mJ92K9s9BpnbdeJ6bNxPLHJyPzDeoxL"
    challenge = page.evaluate("async v => (await import('./js/oidc.js')).codeChallenge(v)", verifier)
    random_one = page.evaluate("async () => (await import('./js/oidc.js')).randomToken()")
    assert challenge == b64url(hashlib.sha256(verifier.encode()).digest())
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", random_one)


# --- Narrow screens and screenshots ---------------------------------------------------------------------------


def test_every_view_on_a_narrow_screen_and_the_screenshots(page: Any, site: Site, tmp_path: Path) -> None:
    shots = screenshots_dir(tmp_path)
    sign_in(page, site, "u-notes", "w-3", admin=True)
    page.get_by_role("link", name="System jobs").click()
    page.get_by_role("button", name="Run now").click()
    expect(page.locator("#jobs-status")).to_contain_text("finished", timeout=60_000)
    page.screenshot(path=shots / "system-jobs.png", full_page=True)

    current = site.api("GET", "/v1/memory/personal/document", user="u-notes").body["document"]["version"]
    saved = site.api(
        "PUT", "/v1/memory/personal/document", {"content": SHOWCASE, "expected_version": current}, user="u-notes"
    )
    assert saved.status == 200
    page.get_by_role("link", name="My memory").click()
    expect(editor(page)).to_have_value(SHOWCASE)
    expect(page.locator("#versions li[data-version]").first).to_contain_text("current")
    page.screenshot(path=shots / "curated-memory.png", full_page=True)
    page.locator("#versions li[data-version]").last.get_by_role("button", name=re.compile("^View")).click()
    expect(page.get_by_role("dialog")).to_be_visible()
    page.screenshot(path=shots / "history-version.png")
    page.keyboard.press("Escape")

    open_notes(page)
    page.get_by_role("button", name="Load older").click()
    expect(page.locator("#notes-days .day")).to_have_count(3)
    page.screenshot(path=shots / "recent-notes.png", full_page=True)
    page.locator(".day .note").first.get_by_role("button", name="Delete note").click()
    expect(page.get_by_role("dialog", name="Delete this note?")).to_be_visible()
    page.screenshot(path=shots / "delete-confirm.png")
    page.keyboard.press("Escape")
    page.get_by_label("Search notes").fill("window seats")
    page.get_by_label("Search notes").press("Enter")
    expect(page.locator("#search-mode")).to_be_visible()
    page.screenshot(path=shots / "search.png", full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    for view in ("memory", "memory?tab=notes", "w-3/workspace-settings/team-memory", "admin/system-jobs"):
        page.goto(site.url + view)
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        page.wait_for_load_state("networkidle")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, f"{view} scrolls sideways on a narrow screen ({width}px)"
        assert_accessible(page)
    page.goto(site.url + "memory?tab=notes")
    expect(page.locator(".note").first).to_be_visible()
    page.screenshot(path=shots / "narrow-recent-notes.png", full_page=True)
    page.goto(site.url + "memory")
    expect(editor(page)).to_have_value(SHOWCASE)
    page.screenshot(path=shots / "narrow-curated-memory.png")
    page.goto(site.url + "admin/system-jobs")
    expect(page.locator("#runs tr[data-run-id]").first).to_be_visible()
    page.screenshot(path=shots / "narrow-system-jobs.png")


def test_the_sign_in_form_on_a_wide_window_is_not_a_narrow_column_and_the_screenshots(
    page: Any, site: Site, tmp_path: Path
) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(site.url)
    expect(page.get_by_label("User id")).to_be_visible()

    form = page.locator("form.signin").bounding_box()
    field = page.get_by_label("User id").bounding_box()
    assert form is not None and field is not None
    assert 400 <= form["width"] <= 640, form  # a readable form, neither a narrow column nor the whole window
    assert field["width"] >= 400, field
    page.screenshot(path=screenshots_dir(tmp_path) / "sign-in.png")


SHOWCASE = """# About the user
- Works in Lisbon on the billing team
- Prefers metric units and ISO dates

# Open threads
- Q3 revenue report, in euros
- Offsite venue booked for March"""
