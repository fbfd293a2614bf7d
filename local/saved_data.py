"""The embedded DynamoDB's data kept across restarts of ``make run``: a snapshot file in a data folder.

moto keeps its tables in the process's memory and has no persistence of its own (its server offers a reset,
not a save), so the stack takes the snapshot itself: every table of every region of the embedded moto,
pickled while no DynamoDB request is being handled (``local.moto_fast.REQUESTS``' lock, the one that
serialises them), so the file is one instant of the whole database, never half a transaction.

- **When**: at start it is loaded (before the template's tables are checked); then every
  ``MEMORY_LOCAL_SAVE_SECONDS`` (default 5), or 20 times as long as the last save took if that is longer,
  when a request may have changed something since the last save; and once more on a clean stop (Ctrl-C,
  SIGTERM). A crash or ``kill -9`` loses at most the writes of the last interval.
- **How**: written to a temporary file beside it, flushed to disk, then renamed over the old one, so a
  crash while saving leaves the previous snapshot whole.
- **One stack a folder**: the folder is locked (``stack.lock``, flock) for as long as the stack runs; a
  second stack on it stops at start with one line.
- **Fresh**: ``make run FRESH=1`` starts empty; the previous snapshot is kept once, renamed
  ``dynamodb.pickle.before-fresh``, until the next fresh start.

The file is a pickle of moto's objects: it is read only from the folder the developer named, and only by
the moto version that wrote it (a snapshot of another version is refused with one line saying what to do).
"""

from __future__ import annotations

import fcntl
import io
import os
import pickle
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from local.environment import ACCOUNT_ID, log
from local.moto_fast import REQUESTS

SNAPSHOT = "dynamodb.pickle"
LOCK = "stack.lock"  # held by the stack that uses the folder (flock: released when its process ends)
# Requests wait while a save pickles the tables (about 1 s at 10,000 notes): the saves come no more often
# than this many times what the last one took, so they hold the requests up 5 % of the time at most.
LOCKED_AT_MOST = 20


class _Snapshot(pickle.Pickler):
    """A pickler that leaves out each table's stream records: the stream is the indexer's feed of changes, read
    from its end at start (local/stream_mapping.py), so a restart needs none of them, and they were half of
    a snapshot's size and time. The shard keeps its place: its next record's sequence number is the same."""

    def reducer_override(self, obj: Any) -> Any:
        from moto.dynamodb.models.table import StreamShard

        if type(obj) is not StreamShard:
            return NotImplemented
        place = obj.starting_sequence_number + len(obj.items)
        return _emptied_shard, (obj.account_id, obj.table, obj.id, place, obj.created_on)


def _emptied_shard(account_id: str, table: Any, shard_id: str, starting: int, created_on: Any) -> Any:
    """A stream shard without records whose next record follows the saved shard's last."""
    from moto.dynamodb.models.table import StreamShard

    shard = StreamShard.__new__(StreamShard)
    shard.__dict__.update(
        account_id=account_id,
        table=table,
        id=shard_id,
        starting_sequence_number=starting,
        items=[],
        created_on=created_on,
    )
    return shard


def _backends() -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[ACCOUNT_ID]


def _moto_version() -> str:
    import moto

    return str(moto.__version__)


@dataclass
class SavedData:
    """The snapshot of the embedded moto's tables in ``folder``, and the thread that keeps it current."""

    folder: Path
    interval_s: float = 5.0
    _saved_at_write: int = field(default=-1, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _lock_file: IO[str] | None = field(default=None, init=False)

    @property
    def path(self) -> Path:
        return self.folder / SNAPSHOT

    def load(self, *, fresh: bool = False) -> int:
        """Put the snapshot's tables into the embedded moto; the number of items loaded (0 when none).

        First the folder is taken for this process (an exclusive lock held until it exits): a second stack
        on the same folder stops with one line instead of writing over the first one's data."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock_file = (self.folder / LOCK).open("a+")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.seek(0)
            owner = self._lock_file.read().strip() or "another process"
            self._lock_file.close()
            raise SystemExit(
                f"the local data {self.folder} is in use by another local stack ({owner}): stop it first,"
                " or give this one another folder with MEMORY_LOCAL_DATA"
            ) from None
        self._lock_file.truncate(0)
        self._lock_file.write(f"pid {os.getpid()}")
        self._lock_file.flush()
        if fresh and self.path.exists():
            self.path.replace(self.path.with_name(SNAPSHOT + ".before-fresh"))
        if not self.path.exists():
            return 0
        try:
            with self.path.open("rb") as file:
                saved = pickle.load(file)  # noqa: S301 - written by this stack into the developer's own folder
        except Exception as error:  # noqa: BLE001 - any unreadable file gets the same one-line advice
            raise SystemExit(self._unreadable(f"it cannot be read ({type(error).__name__}: {error})")) from None
        if not isinstance(saved, dict) or saved.get("moto") != _moto_version():
            written_by = saved.get("moto") if isinstance(saved, dict) else "an unknown version"
            raise SystemExit(self._unreadable(f"moto {written_by} wrote it; this stack runs moto {_moto_version()}"))
        backends = _backends()
        with REQUESTS.lock:
            for region, tables in saved["regions"].items():
                backends[region].tables.update(tables)
            self._saved_at_write = REQUESTS.writes
        return sum(len(table) for tables in saved["regions"].values() for table in tables.values())

    def _unreadable(self, why: str) -> str:
        return f"the saved local data {self.path} is not usable: {why}; start empty with `make run FRESH=1`"

    def save(self) -> bool:
        """Write the snapshot if a request may have changed the data since the last one; True if written."""
        with REQUESTS.lock:  # no request in flight: one instant of every table
            if REQUESTS.writes == self._saved_at_write:
                return False
            backends = _backends()
            regions = {region: dict(backends[region].tables) for region in list(backends.keys())}
            buffer = io.BytesIO()
            _Snapshot(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump({"moto": _moto_version(), "regions": regions})
            blob = buffer.getvalue()
            writes = REQUESTS.writes
        temporary = self.path.with_name(SNAPSHOT + ".tmp")
        with temporary.open("wb") as file:
            file.write(blob)
            file.flush()
            os.fsync(file.fileno())
        temporary.replace(self.path)
        self._saved_at_write = writes
        return True

    def start(self) -> None:
        """Save every ``interval_s`` in a daemon thread until ``stop``."""
        self._thread = threading.Thread(target=self._keep, name="local-data-saver", daemon=True)
        self._thread.start()

    def _keep(self) -> None:
        took = 0.0
        while not self._stop.wait(max(self.interval_s, LOCKED_AT_MOST * took)):
            started = time.monotonic()
            try:
                self.save()
            except Exception as error:  # noqa: BLE001 - the stack keeps serving; the next interval tries again
                log(f"could not save the local data to {self.path}: {type(error).__name__}: {error}")
            took = time.monotonic() - started

    def stop(self) -> None:
        """Stop the thread, then save a last time (the clean stop's snapshot)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.save()


def saved_data_from_environment() -> tuple[SavedData, bool] | None:
    """The data folder ``MEMORY_LOCAL_DATA`` names (``make run`` sets it) and whether to start fresh
    (``MEMORY_LOCAL_FRESH``), or None: without a folder the embedded data lives in the process only."""
    folder = os.environ.get("MEMORY_LOCAL_DATA", "").strip()
    if not folder:
        return None
    interval = os.environ.get("MEMORY_LOCAL_SAVE_SECONDS", "5")
    try:
        interval_s = float(interval)
    except ValueError:
        interval_s = -1
    if not 0 < interval_s <= 3600:
        raise SystemExit(f"MEMORY_LOCAL_SAVE_SECONDS must be a number of seconds from 0 to 3600, not {interval!r}")
    fresh = os.environ.get("MEMORY_LOCAL_FRESH", "").strip().lower() in {"1", "true", "yes", "on"}
    return SavedData(Path(folder).expanduser().resolve(), interval_s=interval_s), fresh
