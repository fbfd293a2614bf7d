"""Load against the local stack: many concurrent clients mixing remember, update_memory and context.

Each client opens a new connection per request (the way a burst of chat backends arrives: what a listen
backlog of 5 answered with resets), for ``seconds``. Afterwards every acknowledged write is read back
through the dashboard's API: each acknowledged note is listed, each acknowledged document version holds
the text that was written. Figures: requests, per-kind statuses, resets, 5xx, lost writes, latency.

    python -m bench.local_load --port 3000 --clients 200 --seconds 30   # against a running `make run`
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

WORKSPACES = ["w-load-1", "w-load-2", "w-load-3", "w-load-4"]
RESETS = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, http.client.RemoteDisconnected)


@dataclass
class Figures:
    clients: int
    seconds: float
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    resets: int = 0
    other_errors: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (user, note id)
    versions: list[tuple[str, int, str]] = field(default_factory=list)  # (workspace, version, content)
    lost_notes: int = 0
    lost_versions: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def requests(self) -> int:
        return sum(self.statuses.values())

    @property
    def server_errors(self) -> int:
        return sum(count for (_, status), count in self.statuses.items() if status >= 500)

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.latencies_ms) or [0.0]
        return {
            "clients": self.clients,
            "seconds": self.seconds,
            "requests": self.requests,
            "requests_per_s": round(self.requests / self.seconds, 1),
            "statuses": {f"{kind} {status}": count for (kind, status), count in sorted(self.statuses.items())},
            "resets": self.resets,
            "other_errors": dict(self.other_errors),
            "5xx": self.server_errors,
            "acknowledged_notes": len(self.notes),
            "acknowledged_versions": len(self.versions),
            "lost_notes": self.lost_notes,
            "lost_versions": self.lost_versions,
            "latency_ms_p50": round(statistics.median(ordered), 1),
            "latency_ms_p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 1),
        }


def request(port: int, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    """One request on a fresh connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        connection.request(method, path, None if body is None else json.dumps(body), headers)
        answer = connection.getresponse()
        raw = answer.read()
        return answer.status, json.loads(raw) if raw else None
    finally:
        connection.close()


def _client(port: int, number: int, deadline: float, figures: Figures) -> None:
    rng = random.Random(number)
    user = f"u-load-{number}"
    sequence = 0
    while time.monotonic() < deadline:
        sequence += 1
        kind = rng.choice(["remember", "remember", "update_memory", "context"])
        workspace = rng.choice(WORKSPACES)
        if kind == "remember":
            context = {"user_id": user, "thread_id": "t-1", "visibility": "private"}
            path, body = "/v1/tools/remember", {"context": context, "arguments": {"text": f"fact {sequence} of {user}"}}
        elif kind == "update_memory":
            context = {"user_id": user, "thread_id": "t-1", "visibility": "shared", "workspace_id": workspace}
            content = f"# Team\n- written by {user}, edit {sequence}"
            path, body = "/v1/tools/update_memory", {"context": context, "arguments": {"content": content}}
        else:
            path, body = "/v1/context", {"context": {"user_id": user, "thread_id": "t-1", "visibility": "private"}}
        started = time.perf_counter()
        try:
            status, answer = request(port, "POST", path, body)
        except RESETS:
            with figures.lock:
                figures.resets += 1
            continue
        except OSError as error:
            with figures.lock:
                figures.other_errors[type(error).__name__] += 1
            continue
        elapsed = (time.perf_counter() - started) * 1000
        with figures.lock:
            figures.statuses[(kind, status)] += 1
            figures.latencies_ms.append(elapsed)
            if kind == "remember" and status == 201:
                figures.notes.append((user, answer["note"]["id"]))
            elif kind == "update_memory" and status == 200:
                figures.versions.append((workspace, answer["document"]["version"], body["arguments"]["content"]))


def check_writes(port: int, figures: Figures, token_for: Any) -> None:
    """Every acknowledged note is listed, every acknowledged version holds its text."""
    by_user: dict[str, set[str]] = {}
    for user, note_id in figures.notes:
        by_user.setdefault(user, set()).add(note_id)
    for user, acknowledged in by_user.items():
        status, answer = request(port, "GET", "/v1/memory/personal/notes?days=2", token=token_for(user, []))
        listed = (
            {note["id"] for day in (answer or {}).get("days", []) for note in day["notes"]} if status == 200 else set()
        )
        figures.lost_notes += len(acknowledged - listed)
    reader = token_for("u-load-check", WORKSPACES)
    for workspace, version, content in figures.versions:
        path = f"/v1/memory/workspaces/{workspace}/document/versions/{version}"
        status, answer = request(port, "GET", path, token=reader)
        if status != 200 or answer["document"]["content"] != content:
            figures.lost_versions += 1


def run(port: int, clients: int, seconds: float, token_for: Any) -> Figures:
    figures = Figures(clients, seconds)
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=_client, args=(port, n, deadline, figures)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    check_writes(port, figures, token_for)
    return figures


def measure_on_local_stack(clients: int = 200, seconds: float = 30.0) -> Figures:
    """Start ``python -m local.server`` on free ports (embedded moto), run the load, stop it (for make bench)."""
    from local.token import mint

    with local_stack() as (port, _):
        return run(port, clients, seconds, lambda user, ws: mint(user, ws, ttl_s=3600))


@contextmanager
def local_stack(**settings: str) -> Iterator[tuple[int, int]]:
    """``python -m local.server`` on free ports (embedded moto, ``settings`` added to a clean environment),
    ready; yields its API port and process id, and stops it afterwards. Without embeddings unless ``settings``
    name a model: the figures are the stack's storage and HTTP (``make run`` embeds each note with
    ``local:minilm``, docs/local-stack.md has what that adds)."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    from local.processes import stop

    def free_port() -> int:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
            return port

    root = Path(__file__).resolve().parent.parent
    port = free_port()
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MEMORY_", "POWERTOOLS_", "OPENAI_"))}
    env = {**keep, "MEMORY_API_PORT": str(port), "MEMORY_LAMBDA_PORT": str(free_port()), **settings}
    env.setdefault("MEMORY_EMBEDDING_MODEL", "none")
    stack = subprocess.Popen(
        [sys.executable, "-m", "local.server"], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if request(port, "GET", "/v1/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        yield port, stack.pid
    finally:
        stop(stack)


def report(figures: Figures) -> str:
    """The section of docs/benchmarks.md."""
    summary = figures.summary()
    statuses = ", ".join(f"{kind}: {count}" for kind, count in summary["statuses"].items())
    figures_by_name = [
        ("clients, each a new connection per request", summary["clients"]),
        ("duration", f"{summary['seconds']:.0f} s"),
        ("requests answered (per second)", f"{summary['requests']} ({summary['requests_per_s']})"),
        ("answers", statuses),
        ("connection resets / other client errors", f"{summary['resets']} / {sum(figures.other_errors.values())}"),
        ("5xx", summary["5xx"]),
        ("notes / versions acknowledged", f"{summary['acknowledged_notes']} / {summary['acknowledged_versions']}"),
        ("notes / versions lost", f"{summary['lost_notes']} / {summary['lost_versions']}"),
        ("latency p50 / p99", f"{summary['latency_ms_p50']:,.0f} ms / {summary['latency_ms_p99']:,.0f} ms"),
    ]
    rows = [f"{name:<46} {value}" for name, value in figures_by_name]
    intro = (
        "200 concurrent clients against the local stack (`make run`'s, embedded moto) mixing remember, "
        "update_memory (unversioned, four shared workspaces) and context; afterwards every acknowledged note "
        "is listed and every acknowledged version read back. The stack runs one event per function at a time "
        "(as a Lambda sandbox does), so latency is queueing: the point is no reset, no 5xx, no lost write."
    )
    return intro + "\n\n" + "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    from local.token import mint

    parser = argparse.ArgumentParser(prog="python -m bench.local_load", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3000, help="the local stack's API port (default 3000)")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args(argv)
    figures = run(args.port, args.clients, args.seconds, lambda user, ws: mint(user, ws, ttl_s=3600))
    print(json.dumps(figures.summary(), indent=2))


if __name__ == "__main__":
    main()
