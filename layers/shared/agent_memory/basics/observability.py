"""Logger and Metrics, created once per process (their settings come from POWERTOOLS_* variables).

No Powertools Tracer: it imports the X-Ray SDK on every cold start of the per-turn path; Lambda's active
tracing (template.yaml) records each invocation without it. The figures are in docs/operations.md.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics

logger = Logger()
metrics = Metrics(namespace="AgentMemory")
