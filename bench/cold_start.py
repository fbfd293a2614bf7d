"""Cold import: each function's handler module imported in a fresh interpreter, as Lambda's init does, then
the service built there, which the first invocation pays.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.runner import LAYER, ROOT, log

_IMPORT_SNIPPET = """\
import importlib, sys, time
sys.path[:0] = sys.argv[1:3]
start = time.perf_counter_ns()
importlib.import_module(sys.argv[3])
imported = time.perf_counter_ns()
from agent_memory.bootstrap import services
services().memory_service
print((imported - start) / 1e6, (time.perf_counter_ns() - imported) / 1e6)
"""


@dataclass(frozen=True)
class ColdStart:
    """A fresh sandbox's two costs: importing the handler module, then building the service on the
    first call. The second is shown next to the first because whatever an import defers (boto3 is only
    imported when the service builds its client) the first invocation pays instead; an import time
    alone can be met by moving work, not only by removing it."""

    import_ms: float
    service_ms: float


def import_command(function: str, pycache: Path) -> tuple[list[str], dict[str, str]]:
    """How to import a function's handler module in a fresh interpreter, as Lambda's init does.

    ``sys.path`` starts with the function's code and the layer (Lambda's /var/task and /opt/python),
    and ``-I`` keeps the working directory and PYTHONPATH out. The environment has Lambda's own
    variables because libraries branch on them at import: outside Lambda, the X-Ray recorder behind
    Powertools' Tracer builds two botocore clients for its sampler (some 250 ms Lambda never pays),
    while in Lambda it patches every supported library it finds instead, ``requests`` included, which
    this virtualenv has (moto's) and the deployed layer does not. Bytecode goes to ``pycache`` rather
    than into the repository; Lambda, shipping no .pyc of ours, also compiles our modules (about 20 ms).
    """
    from local.template import load_template

    properties = load_template()["Resources"][function]["Properties"]
    code = ROOT / properties["CodeUri"]
    module = properties["Handler"].rpartition(".")[0]
    environment = {
        **os.environ,
        "LAMBDA_TASK_ROOT": str(code),
        "AWS_LAMBDA_FUNCTION_NAME": function,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
    }
    interpreter = [sys.executable, "-I", "-X", f"pycache_prefix={pycache}"]
    return [*interpreter, "-c", _IMPORT_SNIPPET, str(code), str(LAYER), module], environment


def cold_start_once(command: list[str], environment: dict[str, str]) -> tuple[float, float]:
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=True, timeout=60)
    import_ms, service_ms = done.stdout.strip().splitlines()[-1].split()
    return float(import_ms), float(service_ms)


def cold_starts(runs: int, functions: tuple[str, ...] = ("ToolsFunction", "ContextFunction")) -> dict[str, ColdStart]:
    """Median cold import (and first service build) of each function, in milliseconds.

    A first, discarded run per function fills the bytecode cache and warms the page cache, so every
    timed run reads compiled modules. The functions take turns, so that this shared machine's slow
    spells (run-to-run spread is easily 20%) fall on both rather than on one.
    """
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as pycache:
        commands = {function: import_command(function, Path(pycache)) for function in functions}
        for command, environment in commands.values():
            cold_start_once(command, environment)
        samples: dict[str, list[tuple[float, float]]] = {function: [] for function in functions}
        log(f"cold imports: {runs} fresh interpreters per function, in turns")
        for _ in range(runs):
            for function, (command, environment) in commands.items():
                samples[function].append(cold_start_once(command, environment))
    return {
        function: ColdStart(
            import_ms=statistics.median(sample[0] for sample in values),
            service_ms=statistics.median(sample[1] for sample in values),
        )
        for function, values in samples.items()
    }
