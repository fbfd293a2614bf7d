"""The dashboard driven in Chromium: the site under test, Playwright's assertions with the tier's timeout, sign-in,
the views, axe-core's findings, where screenshots go."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local.token import mint
from tests.support.stack import Stack, http, printed_sign_in_address

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# What the fake chat model answers to a compression (a consolidation gets its minimal cited edits): long
# enough (over a fifth of a 25,100-character document) for the compression to be accepted as faithful.
FAKE_MODEL_REPLY = "# Memory, as the model rewrote it\n" + "\n".join(
    f"- Fact {i}: kept in a shorter form" for i in range(200)
)
# Without embeddings (make run's local:minilm off): the pages' search results and mode are checked exactly,
# and a hybrid search also answers a scope's other notes by meaning.
KEYWORD = {"MEMORY_EMBEDDING_MODEL": "none"}
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


@dataclass(frozen=True)
class Site:
    stack: Stack

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.stack.api_port}/dashboard/"

    def admit(self, page: Any) -> None:
        """Open the address the stack printed at start, as a developer does once: it keeps the sign-in's key in
        the browser context's cookie."""
        page.goto(printed_sign_in_address(self.stack))

    def api(self, method: str, path: str, body: Any = None, *, user: str, workspaces: tuple[str, ...] = ()) -> Any:
        """A call to the management API as ``user``, from outside the page (another tab, another person)."""
        return http(self.stack, method, path, body, token=mint(user, list(workspaces)))


def axe_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA rules)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())  # through the DevTools protocol: the page's CSP does not apply
    results = page.evaluate(
        """async () => (await axe.run(document, {
               runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']},
               resultTypes: ['violations'],
           })).violations"""
    )
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {[node['target'] for node in v['nodes']]}"
        for v in results
        if v["impact"] in ("serious", "critical")
    ]


def screenshots_dir(tmp_path: Path) -> Path:
    """``make screenshots`` sets DASHBOARD_SCREENSHOTS=docs/screenshots; otherwise they go to the test's tmp dir."""
    target = os.environ.get("DASHBOARD_SCREENSHOTS")
    path = (ROOT / target) if target else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path
