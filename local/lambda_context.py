"""The one fake Lambda context, shared by the local stack, the tests and the benchmarks.

It holds what Lambda's ``context`` gives that Powertools and the handlers read. With a ``deadline`` the time
left runs down as in Lambda; without one it stays at ``remaining_ms``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LambdaContext:
    function_name: str = "ToolsFunction"
    remaining_ms: int = 29_000
    memory_limit_in_mb: int = 512
    aws_request_id: str = "c6af9ac6-7b61-11e6-9a41-93e812345678"
    deadline: float | None = field(default=None, repr=False)  # time.monotonic() at which Lambda would stop it
    region: str = "eu-west-1"
    account_id: str = "123456789012"
    function_version: str = "$LATEST"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{self.region}:{self.account_id}:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    @property
    def log_stream_name(self) -> str:
        return f"local/[$LATEST]{self.aws_request_id.replace('-', '')}"

    def get_remaining_time_in_millis(self) -> int:
        if self.deadline is None:
            return self.remaining_ms
        return max(0, int((self.deadline - time.monotonic()) * 1000))
