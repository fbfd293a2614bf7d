"""The ARNs of what the handlers call, in the partition, account and region of the tests' moto."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

PARTITION = "aws"
ACCOUNT = "123456789012"  # moto's account: the one its queue URLs and secret ARNs name
# The geography prefixes of Bedrock's cross-region inference profiles (``eu.anthropic...``).
_PROFILE_PREFIXES = ("us.", "us-gov.", "eu.", "apac.", "jp.", "au.", "ca.", "global.")


def region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def of(service: str, resource: str, *, account: str | None = ACCOUNT) -> str:
    """``arn:<partition>:<service>:<region>:<account>:<resource>`` (no account: a foundation model's)."""
    return f"arn:{PARTITION}:{service}:{region()}:{account or ''}:{resource}"


def table_arn(table: str, index: str | None = None) -> str:
    table = table if table.startswith("arn:") else of("dynamodb", f"table/{table}")
    return table if index is None else f"{table}/index/{index}"


def queue_arn(queue: str) -> str:
    """A queue's ARN from its URL (``.../<account>/<name>``), or from its name."""
    if "/" not in queue:
        return of("sqs", queue)
    account, _, name = urlsplit(queue).path.strip("/").rpartition("/")
    return of("sqs", name, account=account or ACCOUNT)


def function_arn(function: str, qualifier: str | None = None) -> str:
    """A function's ARN from its name, ``<account>:function:<name>`` or ARN, with its version or alias if any."""
    if ":function:" in function and not function.startswith("arn:"):
        function = f"arn:{PARTITION}:lambda:{region()}:{function}"
    elif not function.startswith("arn:"):
        function = of("lambda", f"function:{function}")
    return f"{function}:{qualifier}" if qualifier else function


def domain_arn(domain: str, path: str = "") -> str:
    """An OpenSearch Service domain's ARN, or that of a path on it (``<domain ARN>/notes/_search``)."""
    return of("es", f"domain/{domain}") + (f"/{path.lstrip('/')}" if path else "")


def parameter_arn(name: str) -> str:
    return name if name.startswith("arn:") else of("ssm", "parameter/" + name.lstrip("/"))


def model_arn(model: str) -> str:
    """A Bedrock model's ARN from its id: an inference profile's (``eu.anthropic...``) or a foundation model's."""
    if model.startswith("arn:"):
        return model
    if model.startswith(_PROFILE_PREFIXES):
        return of("bedrock", f"inference-profile/{model}")
    return of("bedrock", f"foundation-model/{model}", account=None)
