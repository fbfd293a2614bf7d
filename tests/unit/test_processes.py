"""Stopping a child process of the local tools: SIGTERM first, SIGKILL when it does not exit in time."""

from __future__ import annotations

import signal
import subprocess
import sys

from local.processes import stop

IGNORES_SIGTERM = "; ".join(
    ["import signal, time", "signal.signal(signal.SIGTERM, signal.SIG_IGN)", "print(1, flush=True)", "time.sleep(60)"]
)


def test_a_process_that_exits_on_sigterm_gives_its_exit_code() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])

    assert stop(process, timeout_s=30) == -signal.SIGTERM


def test_a_process_that_ignores_sigterm_is_killed_after_the_timeout() -> None:
    process = subprocess.Popen([sys.executable, "-c", IGNORES_SIGTERM], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline()  # its handler is set

    assert stop(process, timeout_s=0.2) == -signal.SIGKILL
    assert process.poll() == -signal.SIGKILL
