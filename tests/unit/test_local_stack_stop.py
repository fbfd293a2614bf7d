"""The local stack stops on SIGTERM whichever of its threads the kernel hands the signal to."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from local.template import ROOT

# A process like the stack: the handler installed by the main thread, which then waits as the stack does, while
# another thread receives the SIGTERM (as the kernel may choose any thread of a process).
SCRIPT = textwrap.dedent(
    """
    import signal, threading
    from local.server import _exit_on_sigterm, wait_for_a_signal

    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    threading.Timer(0.2, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGTERM)).start()
    try:
        wait_for_a_signal(poll_s=0.1)
    except SystemExit:
        print("stopped")
    """
)


def test_a_sigterm_taken_by_another_thread_stops_the_waiting_main_thread():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=10)

    assert done.stdout.strip() == "stopped", done.stderr
