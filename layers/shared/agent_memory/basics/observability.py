"""Logger and Metrics, created once per process (their settings come from POWERTOOLS_* variables).

No Powertools Tracer: it imports the X-Ray SDK on every cold start of the per-turn path; Lambda's active
tracing (template.yaml) records each invocation without it. The figures are in docs/operations.md.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics

logger = Logger()
metrics = Metrics(namespace="AgentMemory")


def model_tokens(purpose: str, input_tokens: int, output_tokens: int) -> None:
    """The tokens a model call reported, as ``ModelInputTokens`` and ``ModelOutputTokens`` with the call's
    ``purpose`` (``flush``, ``compression``, ``consolidation``) as their dimension; each its own EMF record, so
    that calls from the consolidation's threads never share one."""
    from aws_lambda_powertools.metrics import MetricUnit, single_metric

    for name, value in (("ModelInputTokens", input_tokens), ("ModelOutputTokens", output_tokens)):
        with single_metric(
            name=name,
            unit=MetricUnit.Count,
            value=value,
            namespace="AgentMemory",
            default_dimensions={"purpose": purpose},
        ):
            pass
