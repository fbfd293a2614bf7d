"""The background thread of a local event source mapping (the table's stream, the consolidation queue):
``start`` runs the mapping's ``run`` loop in a daemon thread until ``stop``."""

from __future__ import annotations

import threading


class BackgroundPoller:
    thread_name = "poller"

    def __init__(self) -> None:
        self._stop = threading.Event()

    def run(self) -> None:
        raise NotImplementedError

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
