"""docs/local-stack.md "The whole lifecycle, with no model", executed command by command against the local
stack started as the page says (``make run FRESH=1``, nothing set) on a data folder an earlier session
wrote to: each answer is checked, the flush's note (as the page shows it) and the folded version among them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.stack import README_CONTEXT, ROOT, Stack, remember, running_stack, stack_environment

pytestmark = pytest.mark.slow

PAGE = ROOT / "docs" / "local-stack.md"
SECTION = "## The whole lifecycle, with no model"


def lifecycle_section() -> str:
    text = PAGE.read_text()
    assert SECTION in text, f"{PAGE} has no section {SECTION!r}"
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def shown(pattern: str) -> str:
    """What the section's answers show for ``pattern``'s group (the flush's note, the version's size)."""
    found = re.search(pattern, lifecycle_section())
    assert found is not None, pattern
    return found[1]


def lifecycle_commands() -> list[str]:
    """The section's commands: one a ``sh`` block, its ``#`` lines being the answer shown."""
    blocks = re.findall(r"```sh\n(.*?)```", lifecycle_section(), flags=re.DOTALL)
    return [" ".join(line for line in block.splitlines() if not line.startswith("#")).strip() for block in blocks]


def run(command: str, stack: Stack) -> str:
    """``command`` as a developer types it, aimed at this stack's ports; its output (it must exit 0).

    ``make`` is told that the virtualenv is up to date: it is the one running these tests."""
    aimed = command.replace("localhost:3000", f"localhost:{stack.api_port}")
    aimed = aimed.replace("localhost:3001", f"localhost:{stack.lambda_port}")
    aimed = re.sub(r"\bmake ", "make -o .venv/bin/.installed ", aimed)
    env = stack_environment(MEMORY_API_PORT=str(stack.api_port), MEMORY_LAMBDA_PORT=str(stack.lambda_port))
    done = subprocess.run(["bash", "-c", aimed], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def last_json(output: str) -> Any:
    """The JSON value that ends ``output`` (``make consolidate`` prints progress lines before its record)."""
    return json.loads(output[output.index("{") if output.startswith("{") else output.index("\n{") :])


def test_the_lifecycle_page_runs_command_by_command_with_no_model_on_the_fresh_store_it_asks_for(
    tmp_path: Path,
) -> None:
    assert "`make run FRESH=1`" in lifecycle_section()
    data = tmp_path / "data"
    with running_stack(tmp_path / "before", MEMORY_LOCAL_DATA=str(data)) as earlier:  # what make run kept
        assert remember(earlier, README_CONTEXT, "Kept from an earlier session").status == 201
    commands = lifecycle_commands()
    expected = [
        "remember",
        "/v1/context",
        "FlushFunction",
        "make consolidate",
        "/v1/context",
        "versions ",
        "versions/1",
        "dashboard",
    ]
    assert len(commands) == len(expected), commands
    for command, names in zip(commands, expected, strict=True):
        assert names.strip() in command, (names, command)

    fresh = {"MEMORY_LOCAL_DATA": str(data), "MEMORY_LOCAL_FRESH": "1"}  # make run FRESH=1; no model set
    with running_stack(tmp_path / "fresh", **fresh) as stack:
        outputs = iter([run(command, stack) for command in commands])
        assert "Memory model   local:extractive" in stack.stderr()
        assert "Embeddings     local:minilm" in stack.stderr()

    remembered = json.loads(next(outputs))
    assert remembered["note"]["text"] == "Prefers metric units"
    assert remembered["note"]["position"] == 1  # the earlier session's note is not in the fresh store
    first_id = remembered["note"]["id"]

    context = json.loads(next(outputs))
    assert context["document"]["version"] == 0
    assert "Prefers metric units" in context["system_prompt"]

    flushed = json.loads(next(outputs))
    assert (flushed["status"], flushed["model_free"], flushed["note"]["source"]) == ("written", True, "flush")
    assert flushed["note"]["text"] == shown(r'"text":"(User: [^"]+)"')
    assert "Hi!" not in flushed["note"]["text"] and "Thanks!" not in flushed["note"]["text"]
    flush_id = flushed["note"]["id"]

    consolidated = next(outputs)
    assert re.search(r"^finished groups 1/1 done, 0 failed; notes 2 folded", consolidated, flags=re.MULTILINE)
    record = last_json(consolidated)
    assert (record["status"], record["notes_consolidated"], record["groups_failed"]) == ("finished", 2, 0)
    assert record["folds"] == {"edits": 0, "rewrite": 0, "model_free": 1, "unchanged": 0}
    assert record["tokens"] == {"input": 0, "output": 0}

    folded = json.loads(next(outputs))["document"]
    assert folded["version"] == 1
    assert folded["content"].startswith("## Notes\n- [")
    assert "] Prefers metric units\n- [" in folded["content"] and flushed["note"]["text"] in folded["content"]

    versions = json.loads(next(outputs))["versions"]
    assert [(v["version"], v["reason"], v["by"]) for v in versions] == [
        (1, "consolidation", {"run_id": record["run_id"]})
    ]
    assert versions[0]["chars"] == int(shown(r'"chars":(\d+)'))

    version = json.loads(next(outputs))
    assert version["document"]["content"] == folded["content"]
    assert [(edit["op"], edit["notes"]) for edit in version["edits"]] == [("add", [first_id]), ("add", [flush_id])]

    assert next(outputs).strip() == "200"
