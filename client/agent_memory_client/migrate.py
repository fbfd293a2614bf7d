"""Bring a user's (or a workspace's) memory from mem0, Zep or AgentCore Memory, with every fact's date.

    python -m agent_memory_client.migrate --from mem0 memories.json --user u-1
    python -m agent_memory_client.migrate --from zep edges.json --workspace w-3 --author u-1
    python -m agent_memory_client.migrate --from agentcore records.json --user u-1 --api-url https://...

Each peer's export shape, as its own API answers it, becomes ``notes/1`` (``convert``), then the notes are
imported in pages of ``PAGE`` (``migrate``) through ``POST /v1/platform/.../import``, each page with an id of its
own (``<import id>-<page>``): running the command again after a failure sends the same pages under the same
ids, so the pages done answer their receipts again and write nothing, and an unfinished one continues.

- **mem0**: what ``Memory.get_all`` / ``MemoryClient.get_all`` answers: ``{"results": [{"id", "memory",
  "created_at", "updated_at", "user_id", ...}]}`` (or the list itself). A memory's date is its ``created_at``.
- **Zep**: a user's or a graph's edges as ``graph.edge.get_by_user_id`` / ``get_by_graph_id`` answer them: a list of
  ``EntityEdge`` ``{"uuid", "fact", "name", "created_at", "valid_at"?, "invalid_at"?, "expired_at"?, ...}``.
  A fact's date is its ``created_at`` (when it was learned); a fact Zep marked ``expired_at`` or ``invalid_at``
  (superseded, or no longer true) is left behind and counted.
- **AgentCore Memory**: the pages of ``ListMemoryRecords`` (``aws bedrock-agentcore list-memory-records``):
  ``{"memoryRecordSummaries": [{"memoryRecordId", "content": {"text"}, "memoryStrategyId", "namespaces",
  "createdAt", ...}]}``, one page or a list of pages. ``createdAt`` is an ISO 8601 instant or epoch seconds.

An instant without an offset is taken as UTC. The command signs as the chat backend (SigV4 with the caller's AWS
credentials for an AWS endpoint; nothing locally) and prints one line per page and a total.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_memory_client.types import Imported, ImportedNoteIn

PAGE = 500  # the most notes one import request carries
# Requests one page may take: each call that runs out of time (``import_unfinished``) leaves its notes written.
PAGE_CALLS = 30
PEERS = ("mem0", "zep", "agentcore")


class NotAnExport(ValueError):
    """The file is not the export shape of the peer it was said to come from."""


def _instant(value: Any, where: str) -> str:
    """An ISO 8601 instant with its offset (UTC when the peer wrote none), from a string or epoch seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC).isoformat()
    if not isinstance(value, str):
        raise NotAnExport(f"{where}: no date (created_at)")
    try:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise NotAnExport(f"{where}: {value!r} is not an ISO 8601 date") from None
    return (instant if instant.tzinfo else instant.replace(tzinfo=UTC)).isoformat()


def _note(text: Any, created: Any, where: str, source: str, author: str | None) -> ImportedNoteIn | None:
    if not isinstance(text, str) or not text.strip():
        return None
    note: ImportedNoteIn = {"text": text, "created_at": _instant(created, where), "source": source}
    if author is not None:
        note["author"] = author
    return note


def _records(data: Any, key: str, peer: str) -> list[Mapping[str, Any]]:
    """The records of ``data``: under ``key`` of one object, of each of a list of such pages, or the list itself."""
    pages = data if isinstance(data, list) and all(isinstance(p, dict) and key in p for p in data) else [data]
    records: list[Any] = []
    for page in pages:
        found = page.get(key) if isinstance(page, dict) else page
        if not isinstance(found, list):
            raise NotAnExport(f"not a {peer} export: expected a list of records or an object with {key!r}")
        records += found
    if not all(isinstance(record, dict) for record in records):
        raise NotAnExport(f"not a {peer} export: every record is an object")
    return records


def from_mem0(data: Any, author: str | None = None) -> tuple[list[ImportedNoteIn], int]:
    notes = [
        _note(record.get("memory"), record.get("created_at"), f"mem0 {record.get('id')}", "mem0", author)
        for record in _records(data, "results", "mem0")
    ]
    kept = [note for note in notes if note is not None]
    return kept, len(notes) - len(kept)


def from_zep(data: Any, author: str | None = None) -> tuple[list[ImportedNoteIn], int]:
    edges = _records(data, "edges", "Zep")
    live = [edge for edge in edges if not edge.get("expired_at") and not edge.get("invalid_at")]
    notes = [_note(edge.get("fact"), edge.get("created_at"), f"zep {edge.get('uuid')}", "zep", author) for edge in live]
    kept = [note for note in notes if note is not None]
    return kept, len(edges) - len(kept)


def from_agentcore(data: Any, author: str | None = None) -> tuple[list[ImportedNoteIn], int]:
    records = _records(data, "memoryRecordSummaries", "AgentCore")
    notes = [
        _note(
            (record.get("content") or {}).get("text"),
            record.get("createdAt"),
            f"agentcore {record.get('memoryRecordId')}",
            "agentcore",
            author,
        )
        for record in records
    ]
    kept = [note for note in notes if note is not None]
    return kept, len(notes) - len(kept)


CONVERTERS: dict[str, Callable[[Any, str | None], tuple[list[ImportedNoteIn], int]]] = {
    "mem0": from_mem0,
    "zep": from_zep,
    "agentcore": from_agentcore,
}


def convert(peer: str, data: Any, author: str | None = None) -> tuple[list[ImportedNoteIn], int]:
    """``notes/1`` notes from ``peer``'s export ``data``, oldest first, and how many records were left behind."""
    notes, left = CONVERTERS[peer](data, author)
    return sorted(notes, key=lambda note: datetime.fromisoformat(note["created_at"])), left


def pages(notes: Sequence[ImportedNoteIn], size: int = PAGE) -> Iterable[Sequence[ImportedNoteIn]]:
    return (notes[start : start + size] for start in range(0, len(notes), size))


def migrate(
    admin: Any,
    notes: Sequence[ImportedNoteIn],
    *,
    import_id: str,
    user: str | None = None,
    workspace: str | None = None,
    report: Callable[[str], None] = print,
) -> list[Imported]:
    """Import ``notes`` page by page (``admin``: a ``MemoryClient``'s ``admin``); the receipts, one a page."""
    from agent_memory_client.errors import ServiceUnavailable

    receipts: list[Imported] = []
    for number, page in enumerate(pages(notes), start=1):
        for call in range(1, PAGE_CALLS + 1):
            try:
                receipt = admin.import_notes(page, import_id=f"{import_id}-{number}", user=user, workspace=workspace)
                break
            except ServiceUnavailable as unfinished:
                if unfinished.code != "import_unfinished" or call == PAGE_CALLS:
                    raise
                report(f"page {number}: continuing ({unfinished.message})")
        receipts.append(receipt)
        report(
            f"page {number}: {len(receipt['notes'])} written, {len(receipt['skipped'])} skipped as near-duplicates, "
            f"{len(receipt['refused'])} refused"
        )
        for refused in receipt["refused"]:
            report(f"  note {(number - 1) * PAGE + refused['index']}: {refused['code']}: {refused['message']}")
    return receipts


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agent_memory_client.migrate",
        description="Import a mem0, Zep or AgentCore Memory export into a memory, each fact at its own date.",
    )
    parser.add_argument("--from", dest="peer", choices=PEERS, required=True, help="whose export the file is")
    parser.add_argument("file", type=Path, help="the export, as JSON")
    owner = parser.add_mutually_exclusive_group(required=True)
    owner.add_argument("--user", help="into this user's personal memory")
    owner.add_argument("--workspace", help="into this workspace's team memory (with --author)")
    parser.add_argument("--author", help="a team memory's notes: the member they are of")
    parser.add_argument("--api-url", default="http://127.0.0.1:3000", help="the memory API (default: the local stack)")
    parser.add_argument("--import-id", help="the import's id (default: <peer>-<file name>); a rerun reuses it")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from agent_memory_client import MemoryClient, MemoryClientError

    args = _parser().parse_args(argv)
    if args.workspace and not args.author:
        _parser().error("--workspace needs --author: the member the team's notes are of")
    try:
        notes, left = convert(args.peer, json.loads(args.file.read_text()), args.author)
    except (NotAnExport, json.JSONDecodeError, OSError) as error:
        print(f"migrate: {error}", file=sys.stderr)
        return 2
    import_id = args.import_id or f"{args.peer}-{''.join(c if c.isalnum() else '-' for c in args.file.stem)}"[:120]
    print(f"{len(notes)} notes from {args.peer} ({left} records left behind: empty, expired or no longer true)")
    with MemoryClient(args.api_url) as memory:
        try:
            receipts = migrate(memory.admin, notes, import_id=import_id, user=args.user, workspace=args.workspace)
        except MemoryClientError as error:
            print(f"migrate: {error} (run the same command again to continue)", file=sys.stderr)
            return 1
    written = sum(len(receipt["notes"]) for receipt in receipts)
    print(f"done: {written} notes written under import id {import_id}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
