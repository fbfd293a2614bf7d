"""A fake OpenAI-compatible server, run as its own process (``python -m tests.fake_openai PORT``).

Tests that fork Lambda sandboxes point ``MEMORY_CHAT_MODEL=openai:fake`` at it, so that every sandbox
talks to one model through the real provider. ``FAKE_REPLY`` and ``FAKE_DELAY_S`` set what it answers
and how slowly; ``GET /calls`` says how many completions it has served. ``POST /v1/embeddings`` answers
with ``tests.fake_embeddings``' vectors, for ``MEMORY_EMBEDDING_MODEL=openai:fake``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.fake_embeddings import fake_vector

_calls = 0
_lock = threading.Lock()


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self._send({"calls": _calls})

    def do_POST(self) -> None:
        global _calls
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.path.rstrip("/").endswith("/embeddings"):
            vectors = [fake_vector(text) for text in request["input"]]
            self._send({"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)], "model": "fake"})
            return
        with _lock:
            _calls += 1
        time.sleep(float(os.environ.get("FAKE_DELAY_S", "0")))
        reply = os.environ.get("FAKE_REPLY", "A fake summary of the conversation.")
        self._send({"choices": [{"message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]})

    def _send(self, body: object) -> None:
        payload = json.dumps(body).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the caller gave up waiting

    def log_message(self, *args: object) -> None:
        pass


@dataclass(frozen=True)
class FakeOpenAI:
    base_url: str

    def calls(self) -> int:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/calls") as answer:
            count: int = json.loads(answer.read())["calls"]
            return count


@contextmanager
def fake_openai_server(*, reply: str, delay_s: float = 0.0) -> Iterator[FakeOpenAI]:
    """Run the fake in its own process on a free port until the block ends."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    shared = str(Path(__file__).resolve().parents[1] / "layers" / "shared")  # fake_embeddings reads the dimension
    python_path = os.pathsep.join(filter(None, [shared, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "FAKE_REPLY": reply, "FAKE_DELAY_S": str(delay_s), "PYTHONPATH": python_path}
    process = subprocess.Popen([sys.executable, "-m", "tests.fake_openai", str(port)], env=env)
    fake = FakeOpenAI(f"http://127.0.0.1:{port}/v1")
    try:
        for _ in range(200):
            try:
                fake.calls()
                break
            except OSError:
                time.sleep(0.05)
        yield fake
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), _Handler).serve_forever()
