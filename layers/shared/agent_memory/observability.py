"""Logger, Tracer and Metrics, created once per process (their settings come from POWERTOOLS_* variables)."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()
tracer = Tracer()
metrics = Metrics(namespace="AgentMemory")
