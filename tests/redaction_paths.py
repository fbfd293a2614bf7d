"""The secrets corpus (tests/secrets_samples.py) through every write path, and what survives in the table.

One function per path writes texts the way that path does and returns what it stored for each; ``measure``
runs the corpus as written, with characters inserted, and the benign look-alikes, each in scopes of their
own, then reads the whole table: a secret survives if it is anywhere in its scopes' items (notes, versions,
markers), white space and invisible characters taken out. Used by tests/integration/test_redaction_corpus.py
and by ``bench/redaction.py`` (the figures in docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from agent_memory import bootstrap
from agent_memory.domain.commands import DocumentWrite, FlushCommand
from agent_memory.domain.document import Author
from agent_memory.domain.notes import Origin, clean_note_text
from agent_memory.domain.scope import Scope
from tests.fakes import FakeChatModel
from tests.secrets_samples import BENIGN, CORPUS, inserted, survives

DELIMITER = "\n\n§§\n\n"
CHUNK_CHARS = 12_000  # a document chunk: under the soft limit, and room for a compression's filler
NOTES_PER_SCOPE = 400  # under the default quota of notes a day
OLD = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)  # old enough for the nightly fold of 2026-12-03


@contextmanager
def _model(service: Any, reply: Callable[[str, str], str]) -> Iterator[None]:
    previous = service.chat_model
    service.chat_model = lambda: FakeChatModel(reply=reply)
    try:
        yield
    finally:
        service.chat_model = previous


def _chunks(texts: list[str]) -> list[list[str]]:
    chunks: list[list[str]] = [[]]
    size = 0
    for text in texts:
        if chunks[-1] and size + len(text) > CHUNK_CHARS:
            chunks.append([])
            size = 0
        chunks[-1].append(text)
        size += len(text) + len(DELIMITER)
    return chunks


def _scope(prefix: str, index: int) -> Scope:
    return Scope("personal", f"{prefix}-{index}")


def _answering(text: str) -> Callable[[str, str], str]:
    return lambda system, prompt: text


def remember(prefix: str, texts: list[str]) -> list[str]:
    service = bootstrap.services().memory_service
    return [
        service.remember(_scope(prefix, i // NOTES_PER_SCOPE), Origin("u-1", "t-1"), text).note.text
        for i, text in enumerate(texts)
    ]


def flush(prefix: str, texts: list[str]) -> list[str]:
    flusher = bootstrap.services().flush_service
    stored = []
    for i, text in enumerate(texts):
        scope = _scope(prefix, i // NOTES_PER_SCOPE)
        command = FlushCommand(scope, Origin(scope.owner_id, "t-1", f"c-{i}"), (("user", "the deploy"),))
        with _model(flusher, _answering(text)):
            answer = flusher.flush(command)
        assert answer["status"] == "written", answer
        stored.append(answer["note"]["text"])
    return stored


def _documents(prefix: str, texts: list[str], save: Callable[[Scope, str], str]) -> list[str]:
    stored: list[str] = []
    for index, chunk in enumerate(_chunks(texts)):
        stored += save(_scope(prefix, index), DELIMITER.join(chunk)).split(DELIMITER)
    return stored


def update_memory(prefix: str, texts: list[str]) -> list[str]:
    service = bootstrap.services().memory_service

    def save(scope: Scope, content: str) -> str:
        write = DocumentWrite(scope, content, None, "tool", Author(user_id=scope.owner_id, thread_id="t-1"))
        return service.update_memory(write).document.content

    return _documents(prefix, texts, save)


def dashboard_put(prefix: str, texts: list[str]) -> list[str]:
    management = bootstrap.services().management
    return _documents(
        prefix, texts, lambda scope, content: management.save(scope, content, 0, scope.owner_id).document.content
    )


FILLER = "\n\n" + "- a long-standing fact kept as it was.\n" * 170  # about 6,600 characters


def compression(prefix: str, texts: list[str]) -> list[str]:
    """A tool write over the hard limit; the model's rewrite holds the texts (and enough to be faithful)."""
    service = bootstrap.services().memory_service

    def save(scope: Scope, content: str) -> str:
        with _model(service, lambda system, prompt: content + FILLER):
            write = DocumentWrite(scope, "fact. " * 5000, None, "tool", Author(user_id=scope.owner_id, thread_id="t-1"))
            saved = service.update_memory(write)
        assert saved.compressed
        return saved.document.content.removesuffix(FILLER.rstrip())

    return _documents(prefix, texts, save)


def consolidation(prefix: str, texts: list[str]) -> list[str]:
    """A nightly fold per chunk: the model's whole-document answer holds the texts."""
    from local.lambda_context import LambdaContext
    from local.template import load_handler
    from tests.events import event_body
    from tests.support.scopes import write_note

    chunks = {f"{prefix}-{index}": DELIMITER.join(chunk) for index, chunk in enumerate(_chunks(texts))}
    for owner in chunks:
        write_note(Scope("personal", owner), OLD, f"fold marker {owner} end")

    def reply(system: str, prompt: str) -> str:
        owner = next(owner for owner in chunks if f"fold marker {owner} end" in prompt)
        return chunks[owner]

    event = event_body("scheduled")
    event["time"] = "2026-12-03T03:00:00Z"
    event["id"] = f"redaction-{prefix}"
    with _model(bootstrap.services().consolidator, reply):
        result = load_handler("ConsolidateFunction")(
            event, LambdaContext(function_name="ConsolidateFunction", remaining_ms=900_000, memory_limit_in_mb=1024)
        )
    assert result["groups_done"] == len(chunks), result
    management = bootstrap.services().management
    stored: list[str] = []
    for owner in chunks:
        stored += management.document(Scope("personal", owner)).document.content.split(DELIMITER)
    return stored


PATHS: dict[str, Callable[[str, list[str]], list[str]]] = {
    "remember": remember,
    "update_memory": update_memory,
    "dashboard PUT": dashboard_put,
    "flush": flush,
    "consolidation": consolidation,
    "compression": compression,
}
NOTE_PATHS = {"remember", "flush"}


def _stored_text(client: Any, prefix: str) -> str:
    """Every string of every item in the scopes named ``<prefix>-N``."""
    strings: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                strings.append(inner) if key == "S" and isinstance(inner, str) else walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    pages = client.get_paginator("scan").paginate(TableName="MemoryTable")
    for page in pages:
        for item in page["Items"]:
            if item["pk"]["S"].startswith(f"user#{prefix}-"):
                walk(item)
    return "\n".join(strings)


def _expected(path: str, text: str) -> str:
    return clean_note_text(text, max_chars=500 if path == "flush" else 2000).text if path in NOTE_PATHS else text


def measure(path: str, client: Any) -> dict[str, Any]:
    """The corpus's figures on one write path, in the table behind ``client``."""
    write = PATHS[path]
    variants = [variant for secret in CORPUS for _, variant in inserted(secret)]
    write("written", [secret.text for secret in CORPUS])
    write("inserted", [variant.text for variant in variants])
    stored_benign = write("benign", BENIGN)
    written, with_characters = _stored_text(client, "written"), _stored_text(client, "inserted")
    survivors = [secret for secret in CORPUS if survives(secret.secret, written)]
    survivors_inserted = [variant for variant in variants if survives(variant.secret, with_characters)]
    changed = [text for text, kept in zip(BENIGN, stored_benign, strict=True) if kept != _expected(path, text)]
    return {
        "secrets": len(CORPUS),
        "surviving": len(survivors),
        "variants": len(variants),
        "surviving_inserted": len(survivors_inserted),
        "benign": len(BENIGN),
        "benign_changed": len(changed),
        "survivor_kinds": sorted({s.kind for s in survivors + survivors_inserted}),
        "changed_examples": changed[:3],
    }
