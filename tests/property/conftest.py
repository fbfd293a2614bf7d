"""Hypothesis profiles chosen by HYPOTHESIS_PROFILE: ``ci`` (default, ``make test``), ``fuzz`` (``make fuzz``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,  # moto's latency varies on a busy 2-core machine; the test bounds its own time
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}
settings.register_profile("ci", max_examples=200, **_COMMON)
settings.register_profile("fuzz", max_examples=2000, **_COMMON)
settings.register_profile("quick", max_examples=30, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
