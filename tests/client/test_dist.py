"""``make dist``'s packages, checked as a user would meet them; nothing is published.

- The client's wheel and sdist pass ``twine check --strict`` and hold what the package is (every module, the
  ``py.typed`` marker, the changelog).
- The wheel, installed alone into a fresh virtualenv (its dependencies from the index, as a user's ``pip
  install`` gets them), runs the README's backend snippet against the local stack, and what it wrote is read
  back from the stack.
- The npm tarball holds what its ``exports`` name and nothing of its tests or examples; publint and
  arethetypeswrong (the root package.json pins them) pass it, and fail a tarball whose types point nowhere.

``make test`` runs ``make dist`` first. Without dist/ (pytest run alone) the tests skip, saying so, except on
CI (``CI=true``), where they must run.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from local.template import ROOT
from tests.support.stack import Stack, memory_context, stack_environment

pytestmark = pytest.mark.slow

DIST = ROOT / "dist"
VERSION = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]["version"]
TS_PACKAGE = json.loads((ROOT / "client-ts" / "package.json").read_text())
WHEEL = DIST / f"agent_memory_client-{VERSION}-py3-none-any.whl"
SDIST = DIST / f"agent_memory_client-{VERSION}.tar.gz"
TARBALL = DIST / f"{TS_PACKAGE['name']}-{TS_PACKAGE['version']}.tgz"
NODE_BIN = ROOT / "node_modules" / ".bin"
MODULES = sorted(path.name for path in (ROOT / "client" / "agent_memory_client").glob("*.py"))


def _built(*paths: Path) -> None:
    missing = [path.name for path in paths if not path.exists()]
    if not missing:
        return
    reason = f"{', '.join(missing)} not in dist/: `make dist` builds them (make test does)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the packages must be checked)")
    pytest.skip(reason)


def _node_tool(name: str) -> str:
    tool = NODE_BIN / name
    _built(TARBALL)
    if not tool.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"node_modules/.bin/{name} is missing (CI=true: make test installs it)")
        pytest.skip(f"node_modules/.bin/{name} is not installed (make install)")
    return str(tool)


def _run(*command: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)


def test_twine_passes_the_wheel_and_sdist_and_they_hold_the_whole_package() -> None:
    _built(WHEEL, SDIST)

    checked = _run(str(Path(sys.executable).parent / "twine"), "check", "--strict", str(WHEEL), str(SDIST))

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    with zipfile.ZipFile(WHEEL) as wheel_file, tarfile.open(SDIST) as sdist_file:
        wheel = set(wheel_file.namelist())
        sdist = {name.split("/", 1)[1] for name in sdist_file.getnames() if "/" in name}
    assert {f"agent_memory_client/{module}" for module in MODULES} | {"agent_memory_client/py.typed"} <= wheel
    assert {"CHANGELOG.md", "README.md", "pyproject.toml", "agent_memory_client/py.typed"} <= sdist


# The README's snippet leaves to the backend what its model and its conversation give: these are a turn's.
TURN = """\
name, arguments = "remember", {"text": "Prefers metric units"}
compaction_id = "cmp-dist-1"
messages = [{"role": "user", "content": "We are planning the billing migration; Dana signs off payments."}]
"""
REPORT = """
import importlib.metadata, json, agent_memory_client
print(json.dumps({"module": agent_memory_client.__file__, "version": importlib.metadata.version("agent-memory-client"),
                  "system": system, "tools": [tool["toolSpec"]["name"] for tool in tools], "result": result,
                  "flushed": flushed}))
"""


def readme_backend_snippet() -> str:
    """The README's "Use it from your backend" code, on the local stack as its comment says to, the flush's
    answer kept for the report."""
    section = (ROOT / "README.md").read_text().split("## Use it from your backend", 1)[1]
    (snippet,) = re.findall(r"^```python\n(.*?)^```", section.split("\n## ", 1)[0], re.MULTILINE | re.DOTALL)
    local = re.search(r"^# locally: (MemoryClient\(.*\))$", snippet, re.MULTILINE)
    assert local, snippet
    snippet = re.sub(r"^memory = MemoryClient\(.*$", f"memory = {local.group(1)}", snippet, count=1, flags=re.M)
    return re.sub(r"^conversation\.flush\(", "flushed = conversation.flush(", snippet, count=1, flags=re.M)


def test_the_wheel_in_a_fresh_virtualenv_runs_the_readmes_backend_snippet_against_the_local_stack(
    stacks: Callable[[str], Stack], tmp_path: Path
) -> None:
    _built(WHEEL)
    stack = stacks("dist")  # a stack of its own: the snippet's user starts with no memory
    venv = tmp_path / "venv"
    created = _run(sys.executable, "-m", "venv", str(venv))
    assert created.returncode == 0, created.stderr
    python = str(venv / "bin" / "python")
    installed = _run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(WHEEL))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    code = readme_backend_snippet().replace("127.0.0.1:3000", f"127.0.0.1:{stack.api_port}")
    code = code.replace("127.0.0.1:3001", f"127.0.0.1:{stack.lambda_port}")

    # -I: only the virtualenv's site-packages; neither this repository's client/ nor PYTHONPATH is on the path.
    ran = subprocess.run(
        [python, "-I", "-c", TURN + code + REPORT],
        cwd=tmp_path,
        env=stack_environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert ran.returncode == 0, ran.stdout + ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    assert report["module"].startswith(str(venv)) and report["version"] == VERSION
    assert "<memory" in report["system"] and "remember" in report["tools"]
    assert report["result"]["note"]["text"] == "Prefers metric units", report["result"]
    read_back = memory_context(stack, {"user_id": "u-1", "thread_id": "t-other", "visibility": "private"})
    assert read_back.status == 200
    assert "Prefers metric units" in read_back.body["system_prompt"]
    assert report["flushed"]["status"] == "written", report["flushed"]
    assert report["flushed"]["note"]["text"] in read_back.body["system_prompt"]


def tarball_names(tarball: Path) -> set[str]:
    with tarfile.open(tarball) as packed:
        return {name.removeprefix("package/") for name in packed.getnames()}


def test_the_npm_tarball_holds_its_entry_points_and_nothing_of_its_tests() -> None:
    _built(TARBALL)
    names = tarball_names(TARBALL)
    with tarfile.open(TARBALL) as packed:
        packed_json = packed.extractfile("package/package.json")
        assert packed_json is not None
        manifest = json.loads(packed_json.read())

    assert manifest["version"] == TS_PACKAGE["version"]
    targets = [target.removeprefix("./") for entry in manifest["exports"].values() for target in entry.values()]
    assert targets and set(targets) <= names
    assert {"package.json", "README.md", "CHANGELOG.md", "src/index.ts", "dist/src/generated/openapi.d.ts"} <= names
    assert [name for name in names if name.startswith(("test/", "dist/test/", "examples/", "dist/examples/"))] == []
    assert [name for name in names if name.endswith(".tsbuildinfo") or name.startswith("node_modules/")] == []


def _types_pointing_nowhere(tmp_path: Path) -> Path:
    """The tarball with its ``types`` condition naming a file that is not in it."""
    broken = tmp_path / "broken.tgz"
    with tarfile.open(TARBALL) as source, tarfile.open(broken, "w:gz") as target:
        for member in source.getmembers():
            data = source.extractfile(member)
            content = data.read() if data is not None else b""
            if member.name == "package/package.json":
                manifest = json.loads(content)
                manifest["exports"]["."]["types"] = "./dist/src/missing.d.ts"
                content = json.dumps(manifest).encode()
                member.size = len(content)
            target.addfile(member, io.BytesIO(content))
    return broken


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("publint", ["run", "--strict"]), ("attw", ["--profile", "esm-only", "--format", "ascii"])],
)
def test_the_npm_tarballs_exports_and_types_resolve(tool: str, arguments: list[str], tmp_path: Path) -> None:
    """publint reads the manifest against the files; arethetypeswrong resolves the types as Node's ESM and a
    bundler do (``esm-only``: the package is ESM, so a ``require`` and node10's resolution are not asked)."""
    executable = _node_tool(tool)

    passed = _run(executable, *arguments, str(TARBALL), cwd=tmp_path)
    failed = _run(executable, *arguments, str(_types_pointing_nowhere(tmp_path)), cwd=tmp_path)

    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert failed.returncode != 0, failed.stdout + failed.stderr
