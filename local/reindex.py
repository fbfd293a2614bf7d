"""``make reindex``: rebuild the notes index of some scopes from DynamoDB, or check them for drift.

    python -m local.reindex --scope user#u-1 [--scope ws#w-1 ...]          # reindex these scopes
    python -m local.reindex --scope user#u-1 [--scope ws#w-1 ...] --check  # compare counts; exit 1 on drift
    python -m local.reindex --move-alias [--scope ...]    # move the alias to notes-v<N> (providers.index_move)

Without ``OPENSEARCH_ENDPOINT`` but with ``MEMORY_EMBEDDING_MODEL`` (recall without OpenSearch, docs/api.md §6),
the same command fills in the vectors that notes lack in the table (``--check``: counts them; exit 1 if any).

It uses the service's settings: ``MEMORY_TABLE_NAME``, ``OPENSEARCH_ENDPOINT`` (SigV4 for an https
endpoint, with the caller's credentials) and ``MEMORY_EMBEDDING_MODEL`` (the reindex writes each note's
vector; the check also counts the documents without one). With ``AWS_ENDPOINT_URL_DYNAMODB`` set (the local stack's
DynamoDB, as its banner prints it), the local stack's fake credentials and region are the defaults.

Scopes are named one by one (``--scope``, repeatable): listing every scope of the table would need a Scan
of the whole table, which this service never does. The scopes an operator wants are those of a complaint,
or of the indexer's failure queue (each message names the shard and the sequence numbers of the records;
their keys name the scope).

Exit status: 0 when done (or no drift), 1 when ``--check`` found drift, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agent_memory.basics.settings import get_settings
from agent_memory.domain.scope import Scope
from agent_memory.providers.embedding import EmbeddingModel, embedding_model_from_settings
from agent_memory.providers.notes_index import NotesIndex, make_opensearch_client
from agent_memory.recall.reindex import Reindexer, VectorFill
from agent_memory.search.vectors import model_tag
from agent_memory.storage.client import make_dynamodb_client
from agent_memory.storage.note_store import NoteStore
from local.environment import local_credentials


def _scope(value: str) -> Scope:
    prefix, _, owner = value.partition("#")
    if prefix not in ("user", "ws") or not owner:
        raise argparse.ArgumentTypeError(f"{value!r} is not a scope key: user#<user_id> or ws#<workspace_id>")
    return Scope.from_key(value)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m local.reindex", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scope", type=_scope, action="append", default=[], help="a scope key (repeatable): user#<id>, ws#<id>"
    )
    parser.add_argument(
        "--move-alias",
        action="store_true",
        help="first copy the index the alias names into the current version and move the alias there",
    )
    parser.add_argument("--check", action="store_true", help="only compare counts per scope; exit 1 on drift")
    return parser


def main(
    argv: Sequence[str] | None = None, *, index: NotesIndex | None = None, embedder: EmbeddingModel | None = None
) -> int:
    """The command; ``index`` and ``embedder`` replace the configured ones (tests)."""
    parser = _parser()
    arguments = parser.parse_args(argv)
    if not arguments.scope and not arguments.move_alias:
        parser.error("name at least one --scope (or --move-alias)")
    local_credentials()  # against the local stack's DynamoDB: its fake credentials and region
    settings = get_settings()
    no_index = index is None and settings.opensearch_endpoint is None
    if no_index and settings.embedding_model is not None and not arguments.move_alias:
        return _fill_vectors(arguments, embedder or embedding_model_from_settings(settings, timeout_s=60))
    if index is None:
        if settings.opensearch_endpoint is None:
            print("OPENSEARCH_ENDPOINT is not set: there is no index to reindex or check", file=sys.stderr)
            return 2
        index = NotesIndex(
            make_opensearch_client(settings.opensearch_endpoint, timeout_s=30),
            dimensions=settings.embedding_dimensions,
            shards=settings.opensearch_shards,
            replicas=settings.opensearch_replicas,
        )
    if arguments.move_alias:
        from agent_memory.providers.index_move import move_alias

        moved = move_alias(index.client, alias=index.alias)
        print(f"{index.alias}\t{moved.previous} -> {moved.current}\tcopied={moved.copied}\tcaught_up={moved.caught_up}")
    if embedder is None:
        embedder = embedding_model_from_settings(settings, timeout_s=60)
    reindexer = Reindexer(NoteStore(make_dynamodb_client(settings), settings.table_name), index, embedder=embedder)
    drifted = False
    for scope in arguments.scope:
        if arguments.check:
            drift = reindexer.check(scope)
            drifted |= drift.drifted
            verdict = "DRIFT" if drift.drifted else "ok"
            vectors = "" if drift.without_vector is None else f"\twithout_vector={drift.without_vector}"
            print(f"{drift.scope_key}\ttable={drift.in_table}\tindex={drift.in_index}{vectors}\t{verdict}")
        else:
            done = reindexer.reindex(scope)
            print(f"{done.scope_key}\twritten={done.written}\tremoved={done.removed}")
    return 1 if drifted else 0


def _fill_vectors(arguments: argparse.Namespace, embedder: EmbeddingModel | None) -> int:
    settings = get_settings()
    assert embedder is not None and settings.embedding_model is not None  # the caller checked the setting
    notes = NoteStore(make_dynamodb_client(settings), settings.table_name)
    fill = VectorFill(notes, embedder, tag=model_tag(settings.embedding_model, settings.embedding_dimensions))
    missing = False
    for scope in arguments.scope:
        done = fill.check(scope) if arguments.check else fill.fill(scope)
        missing |= arguments.check and done.without_vector > 0
        written = "" if arguments.check else f"\twritten={done.written}"
        print(f"{done.scope_key}\tnotes={done.notes}\twithout_vector={done.without_vector}{written}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
