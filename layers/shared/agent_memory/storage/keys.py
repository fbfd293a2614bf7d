"""The single-table key layout. Everything of one scope shares the partition key ``Scope.key``.

Sort keys (see docs/storage.md):
- ``doc``                     the current document (head), read by every turn in one GetItem;
- ``doc#v#<version:010>``     every saved version, immutable;
- ``day#<YYYY-MM-DD>``        the day's position counter (atomic ADD keeps positions unique);
- ``note#<YYYY-MM-DD>#<position:09>``  a note; one day in order, or two days newest first, is one Query;
- ``flush#<thread>#<compaction_id>``  the flush's claim on one compaction event of one thread (``storage.flush_store``);
- ``extract#<thread>#<extraction_id>``  an extraction's claim, with the notes it wrote (``storage.extraction_store``);
- ``idem#<route>#<caller>#<key>``    the record of one caller's ``Idempotency-Key`` (``storage.idempotency_records``);
- ``usage``                   the characters the scope stores (``storage.usage_store``);
- ``inj#<at>#<thread>``       what one turn was shown (``storage.injection_records``);
- ``erase#<record>``          an erase in progress, with its counts (``storage.scope_items``);
- ``import#<import_id>``      one import's record and, once finished, its receipt (``storage.import_records``);
- ``imp#<import_id>#<n:04>``  the outcome of the import's note number n (in the order they are written);
- ``consolidation#pending``   notes a consolidation folded but has not marked yet (``storage.consolidation_store``);
- ``consolidation#due``       the scope's due marker (``storage.due_markers``).

The due marker of a scope with unconsolidated notes carries ``uc_pk``/``uc_sk``, the keys of the sparse
``Unconsolidated`` index: the nightly planner reads it oldest first, one item per scope, never a note.
A pending-marks record sits in that index too, under ``#pending#<scope>``.

Ids and keys cannot contain ``#``, so a key of one caller or thread never meets another's. Claims and records
under the key format used before keys named their caller or thread (``flush#<compaction_id>``,
``idem#<route>#<key>``) are read once more, where their owner can be told (``legacy_flush_sk``,
``legacy_idempotency_sk``), until they expire.

One partition is not a scope's: ``consolidation`` holds the planners' lease (``lease``) and one item per run
(``run#<started_at>#<run_id>``).
"""

from __future__ import annotations

import zlib

DOC_HEAD = "doc"
VERSION_PREFIX = "doc#v#"
NOTE_PREFIX = "note#"
VECTOR_PREFIX = "vec#"  # a note's vector as the table's vector index reads it (``storage.vector_index``)
USAGE_SK = "usage"
INJECTION_PREFIX = "inj#"
ERASE_PREFIX = "erase#"
EXTRACTION_PREFIX = "extract#"
PENDING_SK = "consolidation#pending"
DUE_SK = "consolidation#due"
UNCONSOLIDATED_INDEX = "Unconsolidated"
UNCONSOLIDATED_SHARDS = 16
DUE_UC_SK_PREFIX = "due#"  # a due marker's ``uc_sk``: ``due#<oldest>#<scope>``
PENDING_UC_SK_PREFIX = "#pending#"  # a pending-marks record's ``uc_sk``: ``#pending#<scope>``
RUNS_PK = "consolidation"
RUN_PREFIX = "run#"
PLANNER_LEASE_SK = "lease"


def version_sk(version: int) -> str:
    return f"{VERSION_PREFIX}{version:010d}"


def flush_sk(thread_id: str, compaction_id: str) -> str:
    """The same compaction id from another thread is another compaction event."""
    return f"flush#{thread_id}#{compaction_id}"


def legacy_flush_sk(compaction_id: str) -> str:
    """A claim written before claims named their thread; kept ``flush_store.CLAIM_TTL_S`` (30 days)."""
    return f"flush#{compaction_id}"


def idempotency_sk(route: str, caller: str, key: str) -> str:
    """The same key from another caller is another request."""
    return f"idem#{route}#{caller}#{key}"


def legacy_idempotency_sk(route: str, key: str) -> str:
    """A record written before records named their caller; kept ``idempotency.KEEP_S`` (24 hours)."""
    return f"idem#{route}#{key}"


def import_sk(import_id: str) -> str:
    return f"import#{import_id}"


def import_outcomes_prefix(import_id: str) -> str:
    """Every outcome of one import (ids hold no ``#``: never another import's, nor the ``import#`` records)."""
    return f"imp#{import_id}#"


def import_outcome_sk(import_id: str, number: int) -> str:
    """Outcome ``number`` of an import: padded, so that a Query reads them in order."""
    return f"{import_outcomes_prefix(import_id)}{number:04d}"


def run_sk(started_at: str, run_id: str) -> str:
    return f"{RUN_PREFIX}{started_at}#{run_id}"


def day_sk(day: str) -> str:
    return f"day#{day}"


def note_sk(day: str, position: int) -> str:
    return f"note#{day}#{position:09d}"


def vector_sk(day: str, position: int) -> str:
    """The sort key of a note's indexed vector: beside the note in its partition, outside every ``note#`` range."""
    return f"{VECTOR_PREFIX}{day}#{position:09d}"


def parse_note_sk(sk: str) -> tuple[str, int]:
    """``(day, position)`` of a note's sort key (or of its indexed vector's)."""
    _, day, position = sk.split("#")
    return day, int(position)


def extraction_sk(thread_id: str, extraction_id: str) -> str:
    """The same extraction id from another thread is another extraction."""
    return f"{EXTRACTION_PREFIX}{thread_id}#{extraction_id}"


def notes_of_days(first_day: str, last_day: str) -> tuple[str, str]:
    """Inclusive sort-key bounds covering every note from ``first_day`` to ``last_day``."""
    return f"note#{first_day}#", f"note#{last_day}#~"


def unconsolidated_shard(scope_key: str) -> str:
    """A scope's shard of the sparse ``Unconsolidated`` index (its due marker's ``uc_pk``); 16 shards spread the write
    load."""
    return _shard(zlib.crc32(scope_key.encode()) % UNCONSOLIDATED_SHARDS)


def due_index_sk(oldest: str, scope_key: str) -> str:
    """A due marker's ``uc_sk``: its scope in true-age order of its oldest unconsolidated note."""
    return f"{DUE_UC_SK_PREFIX}{oldest}#{scope_key}"


def unconsolidated_shards() -> list[str]:
    return [_shard(number) for number in range(UNCONSOLIDATED_SHARDS)]


def _shard(number: int) -> str:
    return f"uc#{number:02d}"
