"""The client stands alone: importing it loads nothing of the service (no layer, pydantic, Powertools, boto3)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "client"
SERVICE_MODULES = (
    "agent_memory",
    "pydantic",
    "aws_lambda_powertools",
    "boto3",
    "jwt",
    "opensearchpy",
    "mcp",
    "anthropic",  # only agent_memory_client.claude_memory, imported by who uses it, loads it
    "agents",  # only agent_memory_client.openai_agents
    "strands",  # only agent_memory_client.strands_agents
    "langgraph",  # only agent_memory_client.langgraph_store
    "langmem",
    "llama_index",  # only agent_memory_client.llama_index_memory
)


def test_importing_the_client_loads_none_of_the_services_dependencies() -> None:
    probe = (
        "import sys, agent_memory_client, agent_memory_client.conversation, agent_memory_client.formats\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({SERVICE_MODULES!r})))"
    )
    # -I: isolated, so only the client folder (and site-packages for httpx, botocore) is on the path.
    out = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(CLIENT)!r})\n{probe}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"


def test_the_package_declares_only_httpx_and_botocore() -> None:
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert [spec.split(">")[0] for spec in project["dependencies"]] == ["httpx", "botocore"]
    assert project["optional-dependencies"]["mcp"][0].startswith("mcp>=2.3.0")
    assert project["optional-dependencies"]["anthropic"] == ["anthropic>=2.10.0,<3"]
    assert project["optional-dependencies"]["openai-agents"] == ["openai-agents>=0.24.0,<0.25"]
    assert project["optional-dependencies"]["strands"] == ["strands-agents>=1.62.0,<2"]
    assert project["optional-dependencies"]["langgraph"] == ["langgraph>=1.2.22,<2", "langmem>=0.0.30,<0.1"]
    assert project["optional-dependencies"]["llamaindex"] == ["llama-index-core>=0.14.25,<0.15"]


OPENAPI_VERSION = json.loads((CLIENT.parent / "docs" / "openapi.json").read_text())["info"]["version"]


@pytest.mark.parametrize(
    ("package", "version"),
    [
        ("client", tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]["version"]),
        ("client-ts", json.loads((CLIENT.parent / "client-ts" / "package.json").read_text())["version"]),
    ],
)
def test_each_clients_changelog_opens_with_its_version_and_the_contract_it_was_built_for(
    package: str, version: str
) -> None:
    changelog = (CLIENT.parent / package / "CHANGELOG.md").read_text()
    newest = changelog.split("\n## ", 2)[1]
    assert re.fullmatch(r"\d+\.\d+\.\d+ \(\d{4}-\d\d-\d\d\)", newest.splitlines()[0]), newest.splitlines()[0]
    assert newest.startswith(f"{version} ("), f"{package}: the newest entry is not version {version}"
    assert f"HTTP API {OPENAPI_VERSION}" in newest, f"{package}: the contract {OPENAPI_VERSION} is not named"
