"""The dashboard driven in Chromium: Playwright's assertions with the tier's timeout, sign-in, the views."""

from __future__ import annotations

from typing import Any

from tests.dashboard.conftest import Site, axe_violations

TIMEOUT_MS = 15_000  # the local stack on two busy cores answers a view's first request slowly


def expect(target: Any) -> Any:
    """Playwright's ``expect`` with the tier's timeout. Playwright is imported on first use, so a machine without
    it collects the tier and skips it (``playwright_browser``) instead of failing to import."""
    from playwright.sync_api import expect as playwright_expect

    playwright_expect.set_options(timeout=TIMEOUT_MS)
    return playwright_expect(target)


def sign_in(page: Any, site: Site, user: str, workspaces: str = "", *, admin: bool = False, path: str = "") -> None:
    page.goto(site.url + path)
    page.get_by_label("User id").fill(user)
    page.get_by_label("Workspaces").fill(workspaces)
    if admin:
        page.get_by_label("Operator (memory_admin): sees System jobs").check()
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def editor(page: Any) -> Any:
    field = page.get_by_label("Curated memory (Markdown)")
    expect(field).to_be_enabled()
    return field


def assert_accessible(page: Any) -> None:
    violations = axe_violations(page)
    assert not violations, "\n".join(violations)


def open_notes(page: Any) -> None:
    page.get_by_role("tab", name="Recent notes").click()
    expect(page.get_by_role("tab", name="Recent notes")).to_have_attribute("aria-selected", "true")
