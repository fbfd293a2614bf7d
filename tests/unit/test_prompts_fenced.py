"""The service's own prompts fence every stored text (docs/security.md "What reaches the model"): each prompt
builder of ``agent_memory.domain.prompts`` is shown the hostile corpus, and every place that asks the chat model
is enumerated and takes its prompt from that module, so a new call of the model (or a new builder) fails here
until it is shown the attack."""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_memory.domain import prompts
from tests.support.injection_corpus import HOSTILE

LAYER = Path(prompts.__file__).resolve().parents[1]
# Each builder, given a stored text where the use case puts one (documents, notes, transcripts, refusals).
BUILDERS: dict[str, Callable[[str], str]] = {
    "compression_prompt": lambda text: prompts.compression_prompt(text, 18_000),
    "flush_prompt": lambda text: prompts.flush_prompt([("user", text), ("assistant", text)]),
    "extraction_prompt": lambda text: prompts.extraction_prompt([("user", text), ("assistant", text)]),
    "consolidation_prompt": lambda text: prompts.consolidation_prompt(text, [("2026-12-01", text)]),
    "consolidation_edits_prompt": lambda text: prompts.consolidation_edits_prompt(
        text, [("2026-12-01.1", "2026-12-01", text)], [text], partial=True
    ),
}
# The modules that ask the chat model (providers.chat, which defines the call, aside): each builds its prompt
# with agent_memory.domain.prompts.
ASKERS = {"consolidation/folding.py", "memory/compression.py", "memory/extraction.py", "memory/flush.py"}


def test_every_prompt_builder_is_shown_the_attack():
    built = {name for name, _ in inspect.getmembers(prompts, inspect.isfunction) if name.endswith("_prompt")}

    assert built == set(BUILDERS)


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("text", HOSTILE)
def test_no_stored_text_forges_a_tag_of_a_prompt(name: str, text: str) -> None:
    quiet = BUILDERS[name]("plain stored text")
    hostile = BUILDERS[name](text)

    tags = re.findall(r"</?[A-Za-z_!?\[|]", hostile)
    assert sorted(tags) == sorted(re.findall(r"</?[A-Za-z_!?\[|]", quiet)), tags  # the builder's own tags only


def _asks_the_model(tree: ast.AST) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in {"ask", "complete"}
        for node in ast.walk(tree)
    )


def test_every_call_of_the_chat_model_builds_its_prompt_with_the_fenced_builders():
    askers: dict[str, ast.Module] = {}
    for path in sorted(LAYER.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if _asks_the_model(tree) and path.relative_to(LAYER).as_posix() != "providers/chat.py":
            askers[path.relative_to(LAYER).as_posix()] = tree

    assert set(askers) == ASKERS, "a new call of the chat model: build its prompt in domain/prompts.py, list it here"
    for name, tree in askers.items():
        imported = {
            node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module is not None
        }
        assert "agent_memory.domain.prompts" in imported, name
