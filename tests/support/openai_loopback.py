"""A loopback OpenAI-compatible server for the unit tier: the chat and the embedding ports' tests share it."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import ClassVar


class OpenAICompatible(BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible server: answers what the test sets (``reply``, ``status``), slowly if asked."""

    reply: ClassVar[dict] = {}
    status = 200
    delay_s = 0.0
    seen: ClassVar[list] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((self.path, self.headers.get("Authorization"), body))
        time.sleep(self.delay_s)
        payload = json.dumps(self.reply).encode()
        try:
            self.send_response(self.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first: the timeout test wants exactly that

    def log_message(self, *args):
        pass
