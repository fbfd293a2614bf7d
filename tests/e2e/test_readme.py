"""Every command the README shows runs: its make targets exist, and its session answers what it says.

The session's ``curl`` commands run as written (only the port changes) against a fresh local stack with the
README's frozen clock; each ``# ...`` line under a command is its expected output, ``...`` standing for
anything.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.stack import Stack, running_stack

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_LIMIT = 10_000


@dataclass(frozen=True)
class Command:
    line: str
    expected: list[str]


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def commands(text: str) -> list[Command]:
    """The commands of the README's ``sh`` blocks, continuation lines joined, each with its expected output."""
    found: list[Command] = []
    for block in shell_blocks(text):
        joined = block.replace("\\\n", " ")
        for raw in joined.splitlines():
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                found[-1].expected.append(line[1:].strip())
                continue
            command, _, _comment = line.partition("  # ")
            found.append(Command(command.strip(), []))
    return found


def inline_make_commands(text: str) -> list[str]:
    """``make <target>`` written in the prose, e.g. `make unit` or `MEMORY_NOW=... make run`."""
    return [span for span in re.findall(r"`([^`\n]+)`", text) if re.search(r"(^|\s)make \w", span)]


def make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.MULTILINE))


def target_of(command: str) -> str:
    words = shlex.split(command)
    return words[words.index("make") + 1]


def as_pattern(expected: str) -> re.Pattern[str]:
    """The expected output with ``...`` standing for anything; the rest matches literally."""
    return re.compile(".*".join(re.escape(part) for part in expected.split("...")), flags=re.DOTALL)


TEXT = README.read_text()
MAKE_COMMANDS = [c.line for c in commands(TEXT) if c.line.split()[0] == "make"] + inline_make_commands(TEXT)
CURL_COMMANDS = [c for c in commands(TEXT) if c.line.startswith("curl ")]


def test_the_readme_is_an_index_of_at_most_10000_bytes() -> None:
    size = len(TEXT.encode())  # bytes, as a fresh clone's checks count them (its drawing takes 3 bytes a character)
    assert size <= README_LIMIT, f"README.md is {size} bytes"


def test_every_shell_command_in_the_readme_is_a_make_target_or_a_session_call() -> None:
    others = [c.line for c in commands(TEXT) if c.line.split()[0] != "make" and not c.line.startswith("curl ")]

    assert MAKE_COMMANDS and CURL_COMMANDS
    assert others == [], "a README command that no test runs"


@pytest.mark.parametrize("command", MAKE_COMMANDS)
def test_each_make_command_in_the_readme_names_a_target(command: str) -> None:
    assert target_of(command) in make_targets(), f"{command!r}: no such target in the Makefile"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A fresh stack: the session's note must be the scope's first of the day."""
    with running_stack(tmp_path_factory.mktemp("readme-stack")) as running:
        yield running


def test_the_readme_session_answers_what_the_readme_says(stack: Stack) -> None:
    for command in CURL_COMMANDS:
        line = command.line.replace("localhost:3000", f"127.0.0.1:{stack.api_port}")
        output = subprocess.run(
            ["bash", "-c", line], capture_output=True, text=True, timeout=20, env={"PATH": "/usr/bin:/bin"}
        ).stdout

        assert command.expected, f"{command.line!r} shows no output"
        for expected in command.expected:
            assert as_pattern(expected).fullmatch(output.strip()), f"{command.line!r}\n-> {output}\n!= {expected}"


def test_the_readme_commands_are_found(tmp_path: Path) -> None:
    """The extraction itself: a continuation line is joined, a comment is the expected output."""
    text = "```sh\ncurl -s a \\\n  -d '{}'\n# {...}\nmake run   # starts it\n```\nThen `make unit`.\n"

    assert commands(text) == [Command("curl -s a    -d '{}'", ["{...}"]), Command("make run", [])]
    assert inline_make_commands(text) == ["make unit"]
    assert as_pattern('{"a":...}').fullmatch('{"a":1,"b":2}')
    assert not as_pattern('{"a":...}').fullmatch('{"b":1}')


def test_the_local_stack_pages_python_runs_against_the_stack(stack: Stack) -> None:
    """docs/local-stack.md's Invoke API example, as written but for the port."""
    (example,) = re.findall(r"^```python\n(.*?)^```", (ROOT / "docs" / "local-stack.md").read_text(), re.M | re.S)
    code = example.replace("127.0.0.1:3001", f"127.0.0.1:{stack.lambda_port}")

    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)

    assert done.returncode == 0, done.stderr
    assert "'statusCode': 200" in done.stdout
    assert """'body': '{"status":"ok"}'""" in done.stdout
