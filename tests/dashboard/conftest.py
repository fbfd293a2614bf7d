"""The browser tier: the dashboard page in headless Chromium (Debian's ``chromium``), driven by Playwright,
against the local stack as ``make run`` starts it, with axe-core (npm) checking each view.

Playwright's own browser downloads cannot run here, so it drives ``/usr/bin/chromium`` (``$CHROMIUM`` to
use another). Without Chromium, Playwright or ``node_modules/axe-core`` (``npm ci``) the tier is skipped with
one line saying why, except on CI (``CI=true``), where it must run and a missing piece fails it.

The data is written through the tools API with the clock frozen (``MEMORY_NOW``) at three instants, one
stack after another on the same DynamoDB (a moto server of this session), so that "Load older" crosses a
gap of empty days deterministically. The stack that the pages use has a fake OpenAI-compatible chat model,
so that a compression and a consolidation run ("Run now") succeed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.calls import free_port
from tests.support.dashboard import AXE, FAKE_MODEL_REPLY, KEYWORD, Site
from tests.support.fake_openai import fake_openai_server
from tests.support.stack import remember, running_stack

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# What works on this machine (no GPU, no network but loopback): see the machine notes in the README.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NOW = "2026-12-03T10:15:00Z"
PRIVATE = {"thread_id": "t-1", "visibility": "private"}

# The notes of each instant: (user or workspace, text). A workspace id starts with "w-".
SEED: dict[str, list[tuple[str, str]]] = {
    "2026-11-20T09:00:00Z": [
        ("u-notes", "Booked the Lisbon offsite venue for March"),
        ("u-notes", "Prefers window seats on flights"),
        ("w-3", "Team retro is every second Friday"),
    ],
    "2026-12-02T16:30:00Z": [
        ("u-notes", "Asked for the quarterly revenue report in euros"),
    ],
    NOW: [
        ("u-notes", "Prefers metric units and ISO dates"),
        ("u-notes", "Flight to Porto on Friday morning"),
        ("u-del", "Temporary note to delete"),
        ("u-del", "A note that stays"),
        ("w-3", "Deploys happen on Tuesdays"),
    ],
}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"Dashboard browser tier: {reason} (CI=true: the tier must run)")
    pytest.skip(f"Dashboard browser tier skipped: {reason}")


def context_for(owner: str) -> dict[str, Any]:
    if owner.startswith("w-"):
        return {"user_id": "u-seed", "thread_id": "t-team", "visibility": "shared", "workspace_id": owner}
    return {"user_id": owner, **PRIVATE}


@pytest.fixture(scope="package")
def playwright_browser() -> Iterator[Any]:
    """Chromium, driven by Playwright's sync API, for this tier's tests only: while it runs, its event loop is the
    thread's running loop, and a later test of the same worker that runs a loop of its own (the clients' async
    methods, an agent's runner) would fail; the tier runs together (tests/support/scheduling.py) and stops it after."""
    if not Path(CHROMIUM).exists():
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    if not AXE.exists():
        _unavailable("node_modules/axe-core is missing (npm ci)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing (pip install -r requirements-dev.txt)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="package")
def dynamodb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A moto server in its own process: the stacks come and go, the data stays."""
    port = free_port()
    log = (tmp_path_factory.mktemp("moto") / "moto.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=15)
        log.close()


@pytest.fixture(scope="package")
def site(playwright_browser: Any, dynamodb: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    logs = tmp_path_factory.mktemp("dashboard-stack")
    for instant, notes in SEED.items():
        if instant == NOW:
            continue
        with running_stack(
            logs / instant.replace(":", ""), MEMORY_NOW=instant, AWS_ENDPOINT_URL_DYNAMODB=dynamodb, **KEYWORD
        ) as seeding:
            for owner, text in notes:
                assert remember(seeding, context_for(owner), text).status == 201
    with (
        fake_openai_server(reply=FAKE_MODEL_REPLY, edits=True) as model,
        running_stack(
            logs / "now",
            MEMORY_NOW=NOW,
            AWS_ENDPOINT_URL_DYNAMODB=dynamodb,
            MEMORY_CHAT_MODEL="openai:fake",
            OPENAI_BASE_URL=model.base_url,
            OPENAI_API_KEY="fake",
            **KEYWORD,
        ) as stack,
    ):
        for owner, text in SEED[NOW]:
            assert remember(stack, context_for(owner), text).status == 201
        yield Site(stack)


@pytest.fixture
def page(playwright_browser: Any, site: Site) -> Iterator[Any]:
    """A fresh browser context (its own sessionStorage) at desktop size; requests off this machine are refused."""
    context = playwright_browser.new_context(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def guard(route: Any) -> None:
        url = route.request.url
        if url.startswith(("http://127.0.0.1:", "data:")):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    site.admit(page)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(15_000)
    yield page
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"
    assert not outside, f"the page reached outside this machine: {outside}"
