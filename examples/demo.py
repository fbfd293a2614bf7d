"""``make demo``: the offline agent conversation, with everything it needs started and stopped around it.

It starts the tests' fake OpenAI-compatible chat model (``tests/support/fake_openai.py``: the flush's note is then
written as a model writes it, the same every run) and the local stack (``python -m local.server``, as ``make
run``, with ``MEMORY_CHAT_MODEL=openai:fake``) on 127.0.0.1, the stack on ``MEMORY_API_PORT`` and
``MEMORY_LAMBDA_PORT`` when they are set (as ``make run``), else on free ports, then plays ``python -m
examples.agent_chat --offline`` (or, with ``--example NAME``, another example of this folder, each with its
scripted model) against them and stops both. With ``--api-url`` it uses a stack that is already running
instead, whose own ``MEMORY_CHAT_MODEL`` writes the flush's note (``make run``: ``local:extractive``, no model,
the note made of the messages' own sentences).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from importlib import import_module
from pathlib import Path

from examples import agent_chat
from examples.cli import free_port
from local.environment import env_port
from local.processes import stop

ROOT = Path(__file__).resolve().parents[1]
FLUSH_NOTE = "Ana is planning the billing migration (cutover week of January 12); open: Dana's payments sign-off."
NOW = "2026-12-03T10:15:00Z"


def _clean_environment(**settings: str) -> dict[str, str]:
    """This shell's environment without AWS, memory or OpenAI settings: the demo sets its own."""
    prefixes = ("AWS_", "MEMORY_", "POWERTOOLS_", "OPENAI_", "FAKE_")
    return {**{k: v for k, v in os.environ.items() if not k.startswith(prefixes)}, **settings}


def _wait(url: str, process: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"demo: {process.args!r} exited with {process.returncode}")
        try:
            with opener.open(url, timeout=2) as answer:
                json.loads(answer.read())
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"demo: {url} did not answer within {timeout_s:g} s")


@contextmanager
def _process(args: list[str], env: dict[str, str], ready_url: str) -> Iterator[None]:
    process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait(ready_url, process)
        yield
    finally:
        stop(process, timeout_s=15)


def stack_port(name: str) -> int:
    """The port ``name`` sets, as ``make run`` reads it (checked the same way), else a free one."""
    return env_port(name, 0) if os.environ.get(name, "").strip() else free_port()


@contextmanager
def local_stack_with_fake_model() -> Iterator[str]:
    """The fake chat model (on a free port) and the local stack (on ``stack_port``'s); yields the API's URL."""
    model_port = free_port()
    api_port, lambda_port = stack_port("MEMORY_API_PORT"), stack_port("MEMORY_LAMBDA_PORT")
    python_path = os.pathsep.join([str(ROOT / "layers" / "shared"), str(ROOT)])
    model_env = _clean_environment(FAKE_REPLY=FLUSH_NOTE, PYTHONPATH=python_path)
    stack_env = _clean_environment(
        MEMORY_API_PORT=str(api_port),
        MEMORY_LAMBDA_PORT=str(lambda_port),
        MEMORY_NOW=NOW,
        MEMORY_CHAT_MODEL="openai:fake",
        OPENAI_BASE_URL=f"http://127.0.0.1:{model_port}/v1",
        OPENAI_API_KEY="fake",
    )
    with ExitStack() as running:
        running.enter_context(
            _process(
                [sys.executable, "-m", "tests.support.fake_openai", str(model_port)],
                model_env,
                f"http://127.0.0.1:{model_port}/calls",
            )
        )
        running.enter_context(
            _process([sys.executable, "-m", "local.server"], stack_env, f"http://127.0.0.1:{api_port}/v1/health")
        )
        yield f"http://127.0.0.1:{api_port}|http://127.0.0.1:{lambda_port}"


EXAMPLES = (
    "agent_chat",
    "claude_memory_tool",
    "openai_agent",
    "strands_agent",
    "mcp_many_users",
    "langgraph_agent",
    "llama_index_chat",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-url", default=None, help="an already running stack (else one is started)")
    parser.add_argument("--user", default="ana")
    parser.add_argument("--example", choices=EXAMPLES, default="agent_chat", help="which example to play")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with ExitStack() as running:
        if args.api_url:
            endpoints = ["--api-url", args.api_url]
        else:
            api_url, lambda_url = running.enter_context(local_stack_with_fake_model()).split("|")
            endpoints = ["--api-url", api_url, "--lambda-url", lambda_url]
        where = endpoints[1] + (f", Lambda Invoke API {endpoints[3]}" if len(endpoints) > 2 else "")
        print(f"demo: memory API {where}, user {args.user!r}, scripted fake model (offline)\n", flush=True)
        if args.example == "agent_chat":
            code = agent_chat.main([*endpoints, "--offline", "--user", args.user, "--thread", "t-demo"])
        else:
            code = import_module(f"examples.{args.example}").main([*endpoints, "--user", args.user])
    print(f"\ndemo: done in {time.monotonic() - started:.1f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
