"""A fake OpenAI-compatible server, run as its own process (``python -m tests.support.fake_openai PORT``).

Tests that fork Lambda sandboxes point ``MEMORY_CHAT_MODEL=openai:fake`` at it, so that every sandbox
talks to one model through the real provider. ``FAKE_REPLY`` and ``FAKE_DELAY_S`` set what it answers
and how slowly; ``GET /calls`` says how many completions it has served. ``POST /v1/embeddings`` answers
with ``tests.support.fake_embeddings``' vectors, for ``MEMORY_EMBEDDING_MODEL=openai:fake``.

Asked to call a tool (``tool_choice``), it calls ``save_facts`` with one fact per user message of the prompt,
citing its number (an extraction), and ``edit_document`` when ``FAKE_EDITS`` is set, with one ``add`` at the end
per note of the prompt, citing it (the consolidation's minimal edits); with ``FAKE_EDITS_FILE``, the edits are
that file's JSON list as it is when the call comes (a test writes each fold's edits there: a ``replace``, a
``delete``). Else it answers ``FAKE_REPLY`` as text, like a server without tool calls. Every answer reports
``usage`` (about four characters a token).
"""

from __future__ import annotations

import json
import os
import re
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

from tests.support.fake_embeddings import fake_vector

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
        prompt = "".join(message["content"] for message in request["messages"])
        tool = request.get("tool_choice", {}).get("function", {}).get("name")
        if tool == "save_facts" or (tool and os.environ.get("FAKE_EDITS")):
            asked = request["messages"][-1]["content"]
            scripted = Path(os.environ.get("FAKE_EDITS_FILE") or "")
            if tool == "save_facts":
                answer: dict[str, object] = {"facts": _user_facts(asked)}
            else:
                answer = {"edits": json.loads(scripted.read_text()) if scripted.is_file() else _added_notes(asked)}
            arguments = json.dumps(answer)
            call = {"id": "call-1", "type": "function", "function": {"name": tool, "arguments": arguments}}
            message: dict[str, object] = {"role": "assistant", "content": None, "tool_calls": [call]}
            answered = arguments
        else:
            answered = os.environ.get("FAKE_REPLY", "A fake summary of the conversation.")
            message = {"role": "assistant", "content": answered}
        usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(answered) // 4}
        self._send({"choices": [{"message": message, "finish_reason": "stop"}], "usage": usage})

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


_NOTE = re.compile(r"^- \[(?P<day>[0-9-]+)\] \(id (?P<id>[0-9.-]+)\) (?P<text>.*)$", re.M)


def _added_notes(prompt: str) -> list[dict[str, object]]:
    """One cited ``add`` at the end per note line of a consolidation prompt."""
    notes = prompt.split("<notes>", 1)[-1]
    return [{"op": "add", "after": None, "text": f"- {m['text']}", "notes": [m["id"]]} for m in _NOTE.finditer(notes)]


@dataclass(frozen=True)
class FakeOpenAI:
    base_url: str

    def calls(self) -> int:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/calls") as answer:
            count: int = json.loads(answer.read())["calls"]
            return count


def _user_facts(prompt: str) -> list[dict[str, object]]:
    """One fact per ``[N] user: ...`` line of an extraction's prompt, citing message N."""
    return [
        {"text": f"The user said: {said}", "messages": [int(number)]}
        for number, said in re.findall(r"^\[(\d+)\] user: (.*)$", prompt, flags=re.MULTILINE)
    ]


@contextmanager
def fake_openai_server(
    *, reply: str, delay_s: float = 0.0, edits: bool = False, edits_file: Path | None = None
) -> Iterator[FakeOpenAI]:
    """Run the fake in its own process on a free port until the block ends; ``edits``: it answers tool calls,
    with the list in ``edits_file`` when that file exists."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    shared = str(Path(__file__).resolve().parents[2] / "layers" / "shared")  # fake_embeddings reads the dimension
    python_path = os.pathsep.join(filter(None, [shared, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "FAKE_REPLY": reply, "FAKE_DELAY_S": str(delay_s), "PYTHONPATH": python_path}
    env["FAKE_EDITS"] = "1" if edits else ""
    env["FAKE_EDITS_FILE"] = str(edits_file or "")
    process = subprocess.Popen([sys.executable, "-m", "tests.support.fake_openai", str(port)], env=env)
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
