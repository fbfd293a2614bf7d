"""The prompt-injection tier (docs/api.md §6 "What reaches the model").

Every hostile text of the corpus is written through a write path (notes: ``remember`` and the flush;
the document: ``update_memory``, the dashboard's ``PUT``, ``restore`` and a consolidation), then the turn's
``system_prompt`` is parsed back: each block tag appears once, the text outside the blocks is the service's
own, and every stored text is found, exactly, inside its own block and nowhere else.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory import bootstrap
from agent_memory.basics.errors import InvalidInput
from agent_memory.domain.context_block import system_prompt
from agent_memory.domain.document import EMPTY_DOCUMENT
from agent_memory.domain.fence import unfence
from agent_memory.domain.notes import clean_note_text
from agent_memory.domain.scope import Scope
from local.lambda_context import LambdaContext
from local.template import load_handler
from local.token import mint
from tests.support.calls import Answer
from tests.support.consolidation import night_context
from tests.support.events import event_body, load_event
from tests.support.fakes import FakeChatModel
from tests.support.injection_corpus import HOSTILE
from tests.support.models import scripted_models
from tests.support.scopes import shared, write_note

TEAM = Scope("team", "w-3")
TOKEN = mint("u-1", ["w-3"])
TAGS = ("<memory_document ", "</memory_document>", "<recent_memory_notes>", "</recent_memory_notes>")
_PROMPT = re.compile(
    r"(?P<head>.*?)<memory_document version=\"(?P<version>\d+)\"(?P<empty> empty=\"true\")?>\n(?P<document>.*)\n"
    r"</memory_document>\n\n(?P<between>[^<]*)<recent_memory_notes>\n(?P<notes>.*?)</recent_memory_notes>(?P<tail>.*)",
    re.S,
)
_NOTE_LINE = re.compile(r"- \[(\d{4}-\d{2}-\d{2}) #(\d+)\] (.*)")


@pytest.fixture(autouse=True)
def local_auth(monkeypatch):
    monkeypatch.setenv("MEMORY_LOCAL_JWT_SECRET", "local-dev-secret")
    bootstrap.reset()


def _manage(name: str, path: str, body: dict[str, Any]) -> Answer:
    event = load_event(f"management/{name}")
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["body"] = json.dumps(body)
    event["headers"]["authorization"] = f"Bearer {TOKEN}"
    del event["requestContext"]["authorizer"]
    result = load_handler("ManagementFunction")(event, LambdaContext())
    return Answer(result["statusCode"], json.loads(result["body"]), result.get("headers", {}))


def _current_version(call) -> int:
    return int(call("context", {"context": shared("w-3")}).body["document"]["version"])


# --- the write paths --------------------------------------------------------------------------------------


def note_by_remember(call, text: str, i: int) -> None:
    answer = call("remember", {"context": shared("w-3"), "arguments": {"text": text}})
    assert answer.status in (201, 422), answer.body


def note_by_flush(call, text: str, i: int, monkeypatch) -> None:
    scripted_models().flush = FakeChatModel(reply=lambda s, p: text)
    body = event_body("flush")
    body["compaction_id"] = f"cmp-{i}"
    assert call("flush", body).body["status"] in ("written", "failed")


def document_by_tool(call, text: str, i: int, monkeypatch) -> None:
    answer = call("update_memory", {"context": shared("w-3"), "arguments": {"content": text}})
    assert answer.status == 200, answer.body


def document_by_put(call, text: str, i: int, monkeypatch) -> None:
    version = _current_version(call)
    answer = _manage(
        "team_put_document", "/v1/memory/workspaces/w-3/document", {"content": text, "expected_version": version}
    )
    assert answer.status == 200, answer.body


def document_by_restore(call, text: str, i: int, monkeypatch) -> None:
    document_by_put(call, text, i, monkeypatch)
    hostile_version = _current_version(call)
    document_by_put(call, "overwritten", i, monkeypatch)
    answer = _manage(
        "team_restore",
        f"/v1/memory/workspaces/w-3/document/versions/{hostile_version}/restore",
        {"expected_version": hostile_version + 1},
    )
    assert answer.status == 200, answer.body


def document_by_consolidation(call, text: str, i: int, monkeypatch) -> None:
    write_note(TEAM, datetime(2026, 11, 20, 9, 0, tzinfo=UTC), f"old fact {i}")
    scripted_models().fold = FakeChatModel(reply=lambda s, p: text)
    event = event_body("scheduled")
    event["time"] = "2026-12-03T03:00:00Z"
    result = load_handler("ConsolidateFunction")(event, night_context())
    assert result["groups_done"] == 1, result


NOTE_PATHS = [note_by_remember, note_by_flush]
DOCUMENT_PATHS = [document_by_tool, document_by_put, document_by_restore, document_by_consolidation]


# --- reading the prompt back ------------------------------------------------------------------------------


def parse_prompt(prompt: str) -> tuple[str, list[str], str]:
    """(the document, the note texts, the text outside every block) as the model would read them."""
    for tag in TAGS:
        assert prompt.count(tag) == 1, f"{tag!r} appears {prompt.count(tag)} times"
    match = _PROMPT.fullmatch(prompt)
    assert match is not None, prompt
    notes = []
    for line in match["notes"].split("\n")[:-1]:
        parsed = _NOTE_LINE.fullmatch(line)
        assert parsed is not None, f"a line of the notes block is not a note line: {line!r}"
        notes.append(unfence(parsed.group(3)))
    document = "" if match["empty"] else unfence(match["document"])
    return document, notes, match["head"] + match["between"] + match["tail"]


def _service_text() -> str:
    """What the service itself writes outside the blocks, for this scope kind."""
    empty = system_prompt("team", EMPTY_DOCUMENT, "<recent_memory_notes>\n</recent_memory_notes>")
    return parse_prompt(empty)[2]


@pytest.mark.parametrize("i", range(len(HOSTILE)), ids=[f"hostile-{i:02d}" for i in range(len(HOSTILE))])
def test_a_hostile_text_stays_inside_its_own_block(call, monkeypatch, i):
    text = HOSTILE[i]
    NOTE_PATHS[i % len(NOTE_PATHS)](call, text, i, monkeypatch) if i % 2 else note_by_remember(call, text, i)
    DOCUMENT_PATHS[i % len(DOCUMENT_PATHS)](call, text, i, monkeypatch)

    answer = call("context", {"context": shared("w-3")})

    assert answer.status == 200
    document, notes, outside = parse_prompt(answer.body["system_prompt"])
    stored_document = answer.body["document"]["content"]
    assert document == stored_document
    assert stored_document.strip() == text.strip()
    assert notes == [note["text"] for note in answer.body["recent_notes"]]
    assert outside == _service_text()
    try:
        expected = clean_note_text(text, max_chars=500 if i % 2 else 2000).text
    except InvalidInput:
        assert notes == []  # refused as empty or a heading: nothing stored
    else:
        assert notes == [expected], "the note was stored as cleaned and injected whole"
        assert not any(ch in expected for ch in "\n\r\x85\u2028\u2029\u200b\u202e")


def test_the_corpus_is_large_enough_and_covers_every_write_path():
    assert len(HOSTILE) >= 50
    assert len(HOSTILE) >= 4 * len(DOCUMENT_PATHS)
