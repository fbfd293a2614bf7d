"""The secrets corpus (tests/support/secrets_samples.py) through every write path, and what survives in the table.

One function per path writes texts the way that path does and returns what it stored for each; ``measure``
runs the corpus as written and with each character inserted, the benign look-alikes and the larger benign
technical corpus (tests/support/benign_samples.py), each in scopes of their own, then reads the whole table: a secret
survives if it is anywhere in its scopes' items (notes, versions, markers), white space and invisible
characters taken out. ``PATHS`` holds one entry per path that stores text (``text_pipeline.WritePath``;
tests/integration/test_write_paths.py checks that they are the same). ``bench/redaction.py`` measures the
corpus so (the figures in docs/benchmarks.md).

``PIPELINES`` says what each path asks of the text pipeline for the texts it stores, and ``measure_pipeline``
runs the whole corpus through that alone: the same figures in seconds, rather than the minutes of some 1,700
writes to moto per path. tests/integration/test_redaction_corpus.py runs the corpus so, and proves the wiring
with a sample of it on each path's real writes: the path stores exactly what its pipeline makes of the
sample, and none of the sample's secrets is anywhere in the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory import bootstrap
from agent_memory.domain.commands import DocumentWrite, ExtractCommand, FlushCommand
from agent_memory.domain.document import Author
from agent_memory.domain.extraction import FACT
from agent_memory.domain.notes import Origin, clean_note_text
from agent_memory.domain.scope import Scope
from agent_memory.domain.text_pipeline import DOCUMENT, NOTE, Form, WritePath, prepare
from agent_memory.memory.flush import FLUSH_NOTE
from agent_memory.people.control import EXPORT_FORMAT
from agent_memory.providers.chat import ModelUse
from tests.support.benign_samples import BENIGN_TECHNICAL
from tests.support.fakes import FakeChatModel
from tests.support.models import scripted_models
from tests.support.secrets_samples import BENIGN, CORPUS, Secret, inserted, survives

DELIMITER = "\n\n§§\n\n"
CHUNK_CHARS = 12_000  # a document chunk: under the soft limit, and room for a compression's filler
NOTES_PER_SCOPE = 400  # under the default quota of notes a day
OLD = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)  # old enough for the nightly fold of 2026-12-03


@contextmanager
def _model(use: ModelUse, reply: Callable[[str, str], str | dict[str, Any]]) -> Iterator[None]:
    """The scripted model of ``use`` answers ``reply`` meanwhile (``scripted_models``, provided to the graph: a path
    takes its service from the graph after its first call)."""
    models = scripted_models()
    previous = getattr(models, use)
    setattr(models, use, FakeChatModel(reply=reply))
    try:
        yield
    finally:
        setattr(models, use, previous)


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
    scripted_models()
    flusher = bootstrap.services().flush_service
    stored = []
    for i, text in enumerate(texts):
        scope = _scope(prefix, i // NOTES_PER_SCOPE)
        command = FlushCommand(scope, Origin(scope.owner_id, "t-1", f"c-{i}"), (("user", "the deploy"),))
        with _model("flush", _answering(text)):
            answer = flusher.flush(command)
        assert answer["status"] == "written", answer
        stored.append(answer["note"]["text"])
    return stored


def _proposing(text: str) -> Callable[[str, str], dict[str, Any]]:
    return lambda system, prompt: {"facts": [{"text": text, "messages": [0]}]}


def extraction(prefix: str, texts: list[str]) -> list[str]:
    """Each text one fact of its own extraction, in a scope of its own (a scope holding a near-identical note would
    skip it)."""
    scripted_models()
    extractor = bootstrap.services().extraction_service
    stored = []
    for i, text in enumerate(texts):
        scope = _scope(prefix, i)
        command = ExtractCommand(scope, Origin(scope.owner_id, "t-1"), f"x-{i}", (("user", "the deploy"),))
        with _model("extraction", _proposing(text)):
            answer = extractor.extract(command)
        assert answer.status == "written" and len(answer.notes) == 1, answer
        stored.append(answer.notes[0].text)
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


def restore(prefix: str, texts: list[str]) -> list[str]:
    """A dashboard restore of the version the texts were saved as, after another version."""
    management = bootstrap.services().management

    def save(scope: Scope, content: str) -> str:
        management.save(scope, content, 0, scope.owner_id)
        management.save(scope, "# replaced for a while", 1, scope.owner_id)
        return management.restore(scope, 1, 2, scope.owner_id).document.content

    return _documents(prefix, texts, save)


def load(prefix: str, texts: list[str]) -> list[str]:
    """An export loaded into empty scopes (the operator's restore): each chunk as a version, each text as a note."""
    people = bootstrap.services().people
    stored: list[str] = []
    for index, chunk in enumerate(_chunks(texts)):
        scope = _scope(prefix, index)
        by = {"user_id": scope.owner_id, "thread_id": None, "run_id": None}
        version = {"version": 1, "content": DELIMITER.join(chunk), "updated_at": "2026-11-20T09:00:00.000Z"}
        notes = [
            {
                "day": "2026-11-20",
                "position": position,
                "text": text,
                "created_at": "2026-11-20T09:00:00.000Z",
                "source": "remember",
                "origin": {"user_id": scope.owner_id, "thread_id": "t-1"},
                "consolidated": True,
            }
            for position, text in enumerate(chunk, start=1)
        ]
        page = {"format": EXPORT_FORMAT, "versions": [{**version, "reason": "tool", "by": by}], "notes": notes}
        people.load(scope, [page])
        loaded = bootstrap.services().notes.every_note(scope)
        stored += [note.text for note in sorted(loaded, key=lambda note: note.position)]
    return stored


def imported(prefix: str, texts: list[str]) -> list[str]:
    """The platform's import (``notes/1``): each chunk as the imported document, each text as a note of its own
    day (a note of the same terms as an earlier one is skipped: it stores the earlier one's text)."""
    from agent_memory.edges.requests.imports import parse_import

    importer = bootstrap.services().importer
    stored: list[str] = []
    for index, chunk in enumerate(_chunks(texts)):
        scope = _scope(prefix, index)
        notes = [
            {"text": text, "created_at": (datetime(2024, 1, 1, 9, tzinfo=UTC) + timedelta(days=position)).isoformat()}
            for position, text in enumerate(chunk)
        ]
        document = DELIMITER.join(chunk)
        body = {"import_id": f"{prefix}-{index}", "format": "notes/1", "document": document, "notes": notes}
        receipt = importer.run(parse_import(body, scope))
        assert not receipt.refused, receipt.refused
        by_id = {note.id: note.text for note in bootstrap.services().notes.every_note(scope)}
        written = {entry.index: by_id[entry.id] for entry in receipt.notes}
        written |= {entry.index: by_id[entry.similar[0]] for entry in receipt.skipped}
        stored += [written[position] for position in range(len(chunk))]
    return stored


def compression(prefix: str, texts: list[str]) -> list[str]:
    """A tool write over the hard limit; the model's rewrite holds the texts (and enough to be faithful)."""
    scripted_models()
    service = bootstrap.services().memory_service

    def save(scope: Scope, content: str) -> str:
        with _model("compression", lambda system, prompt: content + FILLER):
            write = DocumentWrite(scope, "fact. " * 5000, None, "tool", Author(user_id=scope.owner_id, thread_id="t-1"))
            saved = service.update_memory(write)
        assert saved.compressed
        return saved.document.content.removesuffix(FILLER.rstrip())

    return _documents(prefix, texts, save)


def consolidation(prefix: str, texts: list[str]) -> list[str]:
    """A nightly fold per chunk: the model's whole-document answer holds the texts."""
    from local.lambda_context import LambdaContext
    from local.template import load_handler
    from tests.support.events import event_body
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
    with _model("fold", reply):
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
    "extraction": extraction,
    "consolidation": consolidation,
    "compression": compression,
    "restore": restore,
    "load": load,
    "import": imported,
}
NOTE_PATHS = {"remember", "flush", "extraction", "load", "import"}
NOTE_MAX_CHARS = {"flush": 500, "extraction": 300}


@dataclass(frozen=True)
class Pipeline:
    """What one path of ``PATHS`` asks of ``text_pipeline.prepare`` for the texts it stores: the write paths it
    names, in turn (a restore prepares again what the dashboard's save prepared), and the form. A note path's
    texts reach the pipeline one by one; a document path's joined into documents of ``CHUNK_CHARS``, as
    ``_documents`` saves them. ``versions``: each such document is also stored (load's versions)."""

    steps: tuple[WritePath, ...]
    form: Form
    versions: bool = False

    def run(self, text: str, form: Form) -> str:
        for step in self.steps:
            text = prepare(text, step, form, extra=EXTRA).text
        return text


EXTRA: frozenset[str] = frozenset()  # MEMORY_REDACT_EXTRA is unset where the corpus runs (its default)
PIPELINES: dict[str, Pipeline] = {
    "remember": Pipeline(("remember",), NOTE),
    "update_memory": Pipeline(("tool",), DOCUMENT),
    "dashboard PUT": Pipeline(("dashboard",), DOCUMENT),
    "flush": Pipeline(("flush",), FLUSH_NOTE),
    "extraction": Pipeline(("extraction",), FACT),
    "consolidation": Pipeline(("consolidation",), DOCUMENT),
    "compression": Pipeline(("compression",), DOCUMENT),
    "restore": Pipeline(("dashboard", "restore"), DOCUMENT),
    "load": Pipeline(("load",), NOTE, versions=True),
    "import": Pipeline(("import",), NOTE, versions=True),  # its notes, and its document (the chunk) stored beside
}


def prepared(path: str, texts: list[str]) -> tuple[list[str], list[str]]:
    """What ``path`` stores of ``texts`` by its pipeline alone: the texts as its function of ``PATHS`` returns
    them, and the other strings it stores (load's versions)."""
    pipeline = PIPELINES[path]
    documents = [DELIMITER.join(chunk) for chunk in _chunks(texts)]
    if pipeline.form.one_line:
        stored = [pipeline.run(text, pipeline.form) for text in texts]
    else:
        stored = [piece for document in documents for piece in pipeline.run(document, DOCUMENT).split(DELIMITER)]
    others = [pipeline.run(document, DOCUMENT) for document in documents] if pipeline.versions else []
    return stored, others


def stored_texts(client: Any) -> dict[str, str]:
    """Every string of every item in the scopes named ``<prefix>-N``, by prefix: one scan of the table."""
    strings: dict[str, list[str]] = {}

    def walk(value: Any, into: list[str]) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                into.append(inner) if key == "S" and isinstance(inner, str) else walk(inner, into)
        elif isinstance(value, list):
            for inner in value:
                walk(inner, into)

    pages = client.get_paginator("scan").paginate(TableName="MemoryTable")
    for page in pages:
        for item in page["Items"]:
            owner = item["pk"]["S"].removeprefix("user#")
            walk(item, strings.setdefault(owner.rpartition("-")[0], []))
    return {prefix: "\n".join(found) for prefix, found in strings.items()}


def _expected(path: str, text: str) -> str:
    return clean_note_text(text, max_chars=NOTE_MAX_CHARS.get(path, 2000)).text if path in NOTE_PATHS else text


def _changed(path: str, texts: list[str], stored: list[str]) -> list[str]:
    return [text for text, kept in zip(texts, stored, strict=True) if kept != _expected(path, text)]


def measure(path: str, client: Any) -> dict[str, Any]:
    """The corpus's figures on one write path, in the table behind ``client``: the secrets surviving as written
    and with each character inserted (each way in scopes of its own), and the benign texts changed."""
    return _measure(path, PATHS[path], lambda: stored_texts(client))


def measure_pipeline(path: str) -> dict[str, Any]:
    """``measure``'s figures with the corpus through ``path``'s pipeline alone (``prepared``): a secret survives
    if it is in anything the path would store for its way."""
    kept: dict[str, str] = {}

    def write(prefix: str, texts: list[str]) -> list[str]:
        stored, others = prepared(path, texts)
        kept[prefix] = "\n".join(stored + others)
        return stored

    return _measure(path, write, lambda: kept)


def corpus_ways() -> dict[str, list[Secret]]:
    """The corpus as written (``none``) and with each character inserted, by the name of the way."""
    ways: dict[str, list[Secret]] = {"none": list(CORPUS)}
    for secret in CORPUS:
        for name, variant in inserted(secret):
            ways.setdefault(name, []).append(variant)
    return ways


def _measure(
    path: str, write: Callable[[str, list[str]], list[str]], read: Callable[[], dict[str, str]]
) -> dict[str, Any]:
    surviving: dict[str, int] = {}
    kinds: set[str] = set()
    ways = corpus_ways()
    for number, secrets in enumerate(ways.values()):
        write(f"way{number}", [secret.text for secret in secrets])
    changed = _changed(path, BENIGN, write("benign", BENIGN))
    changed_technical = _changed(path, BENIGN_TECHNICAL, write("technical", BENIGN_TECHNICAL))
    stored = read()
    for number, (name, secrets) in enumerate(ways.items()):
        survivors = [secret for secret in secrets if survives(secret.secret, stored.get(f"way{number}", ""))]
        surviving[name] = len(survivors)
        kinds |= {secret.kind for secret in survivors}
    return {
        "secrets": len(CORPUS),
        "surviving": surviving,
        "benign": len(BENIGN),
        "benign_changed": len(changed),
        "technical": len(BENIGN_TECHNICAL),
        "technical_changed": len(changed_technical),
        "survivor_kinds": sorted(kinds),
        "changed_examples": (changed + changed_technical)[:3],
    }


def summary(path: str, figures: dict[str, Any]) -> str:
    """One line of a path's figures, as the test prints it and ``make bench`` records it."""
    surviving = ", ".join(f"{name} {count}" for name, count in figures["surviving"].items())
    return (
        f"redaction corpus, {path}: secrets surviving of {figures['secrets']}: {surviving}; benign changed "
        f"{figures['benign_changed']} of {figures['benign']}, technical {figures['technical_changed']} of "
        f"{figures['technical']}"
    )
