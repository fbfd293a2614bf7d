"""What each turn was shown (docs/api.md §6 ``injections``): the turn's side of its record, which
``storage.injection_records`` writes and lists.

The record is written before the turn is answered: in Lambda a sandbox is frozen as soon as the handler
returns, so a record left to a background thread was written only if that sandbox was invoked again before
it was recycled. Its PutItem starts as soon as what it records is known (``TurnRecord.start``: the document's
version and the ids of the notes the block holds, right after the turn's two reads), on a pool thread, and
is in flight while the answer is built (the prompt, the shape, its JSON); the handler waits for it only then
(``TurnRecord.written``). It cannot start earlier: it records what the two reads returned.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field

from agent_memory.basics.aside import start_aside
from agent_memory.basics.clock import utc_now
from agent_memory.domain.scope import Scope
from agent_memory.storage.injection_records import Injection, InjectionRecorder


@dataclass
class TurnRecord:
    """One turn's record: ``start`` puts it on a pool thread once the turn knows what it shows; ``written`` waits
    for the put (False when it could not be written: counted and logged by ``InjectionRecorder.record``)."""

    recorder: InjectionRecorder
    scope: Scope
    thread_id: str
    user_id: str | None = None
    _put: Future[bool] | None = field(default=None, init=False)

    def start(self, document_version: int, note_ids: list[str]) -> None:
        injection = Injection(self.scope, utc_now(), self.thread_id, document_version, note_ids, user_id=self.user_id)
        self._put = start_aside(lambda: self.recorder.record(injection))

    def written(self) -> bool:
        return self._put is not None and self._put.result()  # ``record`` never raises: False when not written
