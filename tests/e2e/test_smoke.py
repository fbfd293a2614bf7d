"""``make smoke`` against the local stack, as docs/deploying.md shows it: every step passes, a failed step exits 1
and the throw-away user is erased all the same, and the report in the docs is the shape of a real run's."""

from __future__ import annotations

import io
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from agent_memory_client import MemoryClient

from local.smoke import Smoke, main, throwaway_user
from tests.support.calls import free_port
from tests.support.stack import ROOT, Stack, http, running_stack, stack_environment

pytestmark = pytest.mark.slow

USER_LINE = re.compile(r"^throw-away user (smoke-\d{8}T\d{6}Z-[0-9a-f]{12})$", re.MULTILINE)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The model is named, not left to ``make run``'s default: the flush step needs one that writes a note."""
    with running_stack(tmp_path_factory.mktemp("smoke-stack"), MEMORY_CHAT_MODEL="local:extractive") as running:
        yield running


def urls(stack: Stack) -> list[str]:
    return ["--api-url", f"http://127.0.0.1:{stack.api_port}", "--lambda-url", f"http://127.0.0.1:{stack.lambda_port}"]


def erased_user(stack: Stack, report: str) -> str:
    """The report's throw-away user, checked gone through the backend operations' own export."""
    found = USER_LINE.search(report)
    assert found, report
    export = http(stack, "GET", f"/v1/platform/users/{found.group(1)}/export")
    assert export.status == 200, export.body
    assert (export.body["notes"], export.body["versions"], export.body["document"]["content"]) == ([], [], "")
    return found.group(1)


def steps(report: str) -> list[tuple[str, str]]:
    return re.findall(r"^  (ok  |FAIL) (\w+)", report, re.MULTILINE)


def shape(report: str) -> str:
    """A report with what changes from run to run (times, ids, ports, lengths) replaced by placeholders."""
    for pattern, placeholder in [
        (r"\(\d+ ms\)", "(N ms)"),
        (r"smoke-\d{8}T\d{6}Z-[0-9a-f]{12}", "USER"),
        (r"\d{4}-\d\d-\d\d\.\d+", "NOTE"),
        (r"127\.0\.0\.1:\d+", "HOST"),
        (r"\(\d+ chars\)", "(N chars)"),
        (r"\d+ other records", "N other records"),
    ]:
        report = re.sub(pattern, placeholder, report)
    return report


def test_make_smoke_passes_against_the_local_stack_and_leaves_nothing(stack: Stack) -> None:
    command = [
        "make",
        "-s",
        "-o",
        ".venv/bin/.installed",
        "smoke",
        f"API_URL=http://127.0.0.1:{stack.api_port}",
        f"LAMBDA_URL=http://127.0.0.1:{stack.lambda_port}",
    ]
    run = subprocess.run(command, cwd=ROOT, env=stack_environment(), capture_output=True, text=True, timeout=120)

    assert run.returncode == 0, run.stdout + run.stderr
    names = ["health", "remember", "context", "flush", "recall", "erase", "erased"]
    assert steps(run.stdout) == [("ok  ", name) for name in names], run.stdout
    assert "written: note" in run.stdout
    assert run.stdout.rstrip().endswith("7 of 7 steps passed")
    erased_user(stack, run.stdout)

    documented = (ROOT / "docs" / "deploying.md").read_text()
    block = re.search(r"```text\n(smoke check of .*?)```", documented, re.DOTALL)
    assert block, "docs/deploying.md shows a make smoke report"
    assert shape(block.group(1)) == shape(run.stdout)


def test_a_failed_step_exits_1_and_the_user_is_erased_all_the_same(stack: Stack) -> None:
    out = io.StringIO()

    status = main([*urls(stack), "--flush-function", "NoSuchFunction"], out)

    report = out.getvalue()
    assert status == 1, report
    assert ("FAIL", "flush") in steps(report)
    assert "ResourceNotFoundException" in report
    assert [name for mark, name in steps(report) if mark == "ok  "] == [
        "health",
        "remember",
        "context",
        "recall",
        "erase",
        "erased",
    ]
    assert report.rstrip().endswith("6 of 7 steps passed: FAILED")
    erased_user(stack, report)


def test_make_smoke_without_an_api_url_says_what_it_needs() -> None:
    run = subprocess.run(
        ["make", "-s", "-o", ".venv/bin/.installed", "smoke"],
        cwd=ROOT,
        env=stack_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert run.returncode != 0
    assert "API_URL=<the ApiUrl output> is required" in run.stdout + run.stderr


def test_an_api_that_does_not_answer_fails_at_health_and_erases_nothing(tmp_path: Path) -> None:
    out = io.StringIO()

    status = main(["--api-url", f"http://127.0.0.1:{free_port()}", "--lambda-url", "http://127.0.0.1:1"], out)

    assert status == 1
    assert steps(out.getvalue()) == [("FAIL", "health")]
    assert "MemoryTransportError" in out.getvalue()


def test_signing_without_a_region_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    out = io.StringIO()

    for api_url in ("https://memory.example.amazonaws.com", "https://memory.example.org"):  # a custom domain too
        status = main(["--api-url", api_url], out)

        assert status == 2
        assert out.getvalue() == ""


def test_signing_without_credentials_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chain = (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    )
    for name in (*chain, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")

    status = main(["--api-url", "https://abc123.execute-api.eu-west-1.amazonaws.com"], io.StringIO())

    assert status == 2
    assert capsys.readouterr().err == (
        "make smoke: no AWS credentials (AWS_PROFILE, the environment or an instance role)\n"
    )


def test_the_throwaway_user_is_a_valid_id_that_no_two_runs_share() -> None:
    users = {throwaway_user() for _ in range(50)}

    assert len(users) == 50
    assert all(re.fullmatch(r"[A-Za-z0-9._@-]{1,128}", user) for user in users)


def test_an_answer_of_another_shape_fails_its_step_and_the_erase_still_runs() -> None:
    """Against a server that answers every route 200 with ``{}`` (not the service): the checks fail, each on
    its own line, and the run still tries the erase."""
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        return httpx.Response(200, json={"status": "ok"} if request.url.path == "/v1/health" else {})

    with MemoryClient("http://127.0.0.1:9", http=httpx.Client(transport=httpx.MockTransport(answer))) as memory:
        smoke = Smoke(memory, throwaway_user(), recall_wait_s=0)
        assert smoke.run() is False

    assert [(step.name, step.ok) for step in smoke.steps] == [("health", True), ("remember", False), ("erase", False)]
    assert "not of the documented shape" in smoke.steps[1].detail
    assert seen[-1] == f"DELETE /v1/platform/users/{smoke.user_id}"
