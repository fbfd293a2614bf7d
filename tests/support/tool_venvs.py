"""The interpreters of the tools' own virtualenvs (Strands, Google ADK: their pins clash with the service's), which a
few tests play in. ``make test`` builds them; under ``CI=true`` a missing one fails the test instead of skipping it,
so CI always checks those paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tool_python(variable: str, folder: str, checked: str) -> Path:
    """``$variable``, else ``folder``'s interpreter; ``checked`` names what the test checks there (for the message)."""
    python = Path(os.environ.get(variable, ROOT / folder / "bin" / "python"))
    if not python.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{python} is missing (CI=true: {checked} must be checked)")
        pytest.skip(f"{python} is missing (make install creates {folder})")
    return python


def strands_python(checked: str) -> Path:
    return tool_python("STRANDS_PYTHON", ".venv-strands", checked)


def adk_python(checked: str) -> Path:
    return tool_python("ADK_PYTHON", ".venv-adk", checked)
