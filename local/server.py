"""The local stack (``make run``): the HTTP API and the Lambda Invoke API of ``template.yaml`` on 127.0.0.1.

No AWS account, no Docker: the handlers run in this process, as Lambda would call them, against an embedded
DynamoDB (moto) or the one that ``AWS_ENDPOINT_URL_DYNAMODB`` points at (docs/api.md §1).

- ``$MEMORY_API_PORT`` (3000): API Gateway HTTP API, payload v2 events, routed from the template's events.
- ``$MEMORY_LAMBDA_PORT`` (3001): ``POST /2015-03-31/functions/{name}/invocations``, as ``sam local start-lambda``.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
from types import FrameType

# The names other modules and tests import from here stay importable from here.
from local import dashboard
from local.api_gateway import ApiHandler, GatewayError, HttpRequest, api_gateway_event, api_routes, http_reply
from local.environment import (
    HOST,
    LOCAL_ENVIRONMENT,
    choose_chat_model,
    choose_embedding_model,
    ensure_tables,
    env_port,
    log,
    prepare_environment,
    start_embedded_dynamodb,
)
from local.event_sources import start_stream_mapping
from local.functions import Functions, lambda_context
from local.httpd import LocalServer, serve
from local.invoke_api import InvokeHandler
from local.saved_data import SavedData, saved_data_from_environment
from local.template import ROOT, function_names

__all__ = [
    "LOCAL_ENVIRONMENT",
    "Functions",
    "GatewayError",
    "HttpRequest",
    "api_gateway_event",
    "api_routes",
    "http_reply",
    "lambda_context",
    "log",
    "main",
]


def banner(
    api: LocalServer,
    invoke: LocalServer,
    endpoint: str,
    embedded: bool,
    created: list[str],
    indexer: str | None = None,
    model: str | None = None,
    data: str | None = None,
    embeddings: str | None = None,
) -> str:
    api_url = f"http://{HOST}:{api.server_address[1]}"
    lines = [f"Local stack of {ROOT / 'template.yaml'}", f"  HTTP API       {api_url}"]
    lines += [f"    {route.method:<6} {route.path:<28} -> {route.function}" for route in api_routes()]
    lines.append(f"  Dashboard      {dashboard.sign_in_address(api_url)}  (open it once to sign in as any user id)")
    lines.append(f"  Lambda Invoke  http://{HOST}:{invoke.server_address[1]}  ({', '.join(function_names())})")
    storage = "embedded moto" if embedded else "AWS_ENDPOINT_URL_DYNAMODB"
    tables = f"created {', '.join(created)}" if created else "tables already there, kept"
    lines.append(f"  DynamoDB       {endpoint}  ({storage}; {tables})")
    if embedded:
        lines.append(data or "  Data           in this process only: lost at stop (MEMORY_LOCAL_DATA keeps it)")
    if model is not None:
        lines.append(model)
    if embeddings is not None:
        lines.append(embeddings)
    if indexer is not None:
        lines.append(f"  Indexer        stream of MemoryTable -> IndexerFunction -> {indexer}")
    lines.append("Ready. Ctrl-C to stop.")
    return "\n".join(lines)


def saved_data_line(saved: SavedData, items: int, fresh: bool) -> str:
    start = "started empty (FRESH)" if fresh else f"{items} item{'' if items == 1 else 's'} loaded"
    return f"  Data           {saved.folder}  ({start}; saved every {saved.interval_s:g} s and at a clean stop)"


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM unwinds the main thread like Ctrl-C does, so the same cleanup runs and the exit code is 0."""
    raise SystemExit(0)


def wait_for_a_signal(poll_s: float = 0.5) -> None:
    """Block the main thread until a signal's handler raises (SIGTERM, Ctrl-C). It wakes every ``poll_s``: the
    kernel may deliver a process's signal to any of the stack's threads (the servers', the pollers'), and then
    Python runs the handler only when the main thread next runs, which a wait with no timeout never does (the
    stack then ignored SIGTERM until it was killed)."""
    while True:
        threading.Event().wait(poll_s)


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>`: every thread's stack, to see where a stop hangs
    prepare_environment()
    model = choose_chat_model()  # before the settings are read: unset means local:extractive
    embeddings = choose_embedding_model()  # ... and local:minilm
    from agent_memory import bootstrap
    from agent_memory.basics.settings import SettingsError, require_valid_settings

    try:
        require_valid_settings()  # a bad setting stops the stack here, with one line naming it
    except SettingsError as error:
        raise SystemExit(str(error)) from None
    api_port, lambda_port = env_port("MEMORY_API_PORT", 3000), env_port("MEMORY_LAMBDA_PORT", 3001)
    # A function that invokes another (the dashboard starting a consolidation run) reaches this stack.
    os.environ.setdefault("AWS_ENDPOINT_URL_LAMBDA", f"http://{HOST}:{lambda_port}")
    moto_server = saved = None
    servers: list[LocalServer] = []
    stream_mapping = queue_mapping = None
    try:
        moto_server = start_embedded_dynamodb()
        data_line = None
        if moto_server is not None and (kept := saved_data_from_environment()) is not None:
            items = kept[0].load(fresh=kept[1])  # a snapshot it cannot use stops the stack, and stays as it was
            saved = kept[0]
            saved.start()
            data_line = saved_data_line(saved, items, kept[1])
        endpoint = os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
        created = ensure_tables(endpoint)
        functions = Functions()
        functions.warm()
        stream_mapping = start_stream_mapping(endpoint, functions)  # before the first request can write
        if moto_server is not None:  # the consolidation queue lives on the embedded moto (local/sqs_mapping.py)
            from local.sqs_mapping import start_queue_mapping

            queue_mapping = start_queue_mapping(endpoint, functions)
        # The settings were read (and the object graph built on them) by the checks at start and at each
        # handler's import, before the queue's URL was known: read them again, so that the planner sends its
        # groups to the local queue.
        bootstrap.reset()
        # The embedding model's weights load now, not in the first remember (local:minilm: about a second).
        bootstrap.services().embedding_model  # noqa: B018 - built for its side effect, and kept by the graph
        dashboard.sign_in_key()  # made before the first request can ask for it; the banner prints it
        servers.append(serve(ApiHandler, api_port, functions))
        servers.append(serve(InvokeHandler, lambda_port, functions))
        indexer = os.environ["OPENSEARCH_ENDPOINT"] if stream_mapping is not None else None
        embedded = moto_server is not None
        log(banner(servers[0], servers[1], endpoint, embedded, created, indexer, model, data_line, embeddings))
        wait_for_a_signal()
    except KeyboardInterrupt:
        pass
    finally:
        if stream_mapping is not None:
            stream_mapping.stop()
        if queue_mapping is not None:
            queue_mapping.stop()
        for server in servers:
            server.shutdown()
            server.server_close()
        if saved is not None:
            saved.stop()  # after the servers: nothing writes any more, and the last writes are in the file
        if moto_server is not None:
            moto_server.stop()
        if servers:
            log("Local stack stopped.")


if __name__ == "__main__":
    main()
