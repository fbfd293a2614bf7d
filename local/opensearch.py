"""``make opensearch``: a local single-node OpenSearch 2.19.1 with the k-NN plugin, fetched with Maven once.

OpenSearch publishes its minimal distribution on Maven Central
(``org.opensearch.distribution.integ-test-zip:opensearch:2.19.1:zip``) and the k-NN plugin
(``org.opensearch.plugin:opensearch-knn:2.19.1.0:zip``). The minimal distribution holds one module
(transport-netty4) and no JDK, and k-NN extends ``lang-painless``, which is published only as a jar
(``org.opensearch.plugin:lang-painless:2.19.1``): so this assembles that module from the jar and its
dependencies (Maven resolves them), writes its descriptor, then installs k-NN with ``opensearch-plugin``.
That k-NN zip lacks the native faiss/nmslib libraries; the index uses the Lucene engine (pure Java).
The notes index's English analyzer (stop words, Porter2: ``agent_memory.search.analysis``) needs the
``analysis-common`` module, also published only as a jar (``org.opensearch.plugin:analysis-common:2.19.1``):
it is assembled the same way, on first use, into an installation that lacks it.

Everything lands where the node's user can reach it, whatever folder the checkout sits in: as a user, in
``.cache/opensearch`` of the checkout (ignored by git); as root, where the node runs as ``nobody``, in
``/var/cache/agent-memory/opensearch``, which only root writes, since ``nobody`` cannot enter a checkout under
a private folder (a home directory of mode 0700, ``mktemp -d``). ``throwaway_node()`` is shared with the tests
(``tests/opensearch/conftest.py``) and ``make bench``, which start their own node on a free port.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from local.processes import stop
from local.template import ROOT

VERSION = "2.19.1"
# OpenSearch refuses to run as root: as root the node runs as this user (and group), who owns nothing here.
NODE_USER = ("nobody", "nogroup")
AS_ROOT = os.geteuid() == 0
CACHE = Path("/var/cache/agent-memory/opensearch") if AS_ROOT else ROOT / ".cache" / "opensearch"
HOME = CACHE / f"opensearch-{VERSION}"
DISTRIBUTION = f"org.opensearch.distribution.integ-test-zip:opensearch:{VERSION}:zip"
KNN = f"org.opensearch.plugin:opensearch-knn:{VERSION}.0:zip"
PAINLESS = f"org.opensearch.plugin:lang-painless:{VERSION}"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
HEAP = "-Xms512m -Xmx512m"

_PAINLESS_POM = f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>opensearch-modules</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.opensearch.plugin</groupId><artifactId>lang-painless</artifactId>
      <version>{VERSION}</version></dependency>
  </dependencies>
</project>
"""
# The module's own jars; the rest of its Maven dependencies (OpenSearch itself, Lucene...) the server has.
_PAINLESS_JARS = (
    "lang-painless",
    "opensearch-scripting-painless-spi",
    "antlr4-runtime",
    "asm",
    "asm-util",
    "asm-tree",
    "asm-commons",
    "asm-analysis",
)
_PAINLESS_DESCRIPTOR = f"""description=Painless scripting (assembled from Maven Central for the k-NN plugin)
version={VERSION}
name=lang-painless
classname=org.opensearch.painless.PainlessPlugin
java.version=11
opensearch.version={VERSION}
extended.plugins=
has.native.controller=false
"""
_PAINLESS_POLICY = """grant {
  permission java.lang.RuntimePermission "createClassLoader";
  permission java.lang.RuntimePermission "getClassLoader";
};
"""


def java_home() -> str | None:
    """A JDK 17+ for OpenSearch: ``OPENSEARCH_JAVA_HOME``, ``JAVA_HOME``, or the one ``java`` on PATH belongs to."""
    for name in ("OPENSEARCH_JAVA_HOME", "JAVA_HOME"):
        if os.environ.get(name):
            return os.environ[name]
    java = shutil.which("java")
    return str(Path(java).resolve().parent.parent) if java else None


def _maven(*args: str, cwd: Path = CACHE) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError("Maven (mvn) is needed once, to fetch OpenSearch from Maven Central")
    subprocess.run([mvn, "-q", "-B", *args], cwd=cwd, check=True)


_ANALYSIS_DESCRIPTOR = f"""description=Analysis-common (assembled from Maven Central for the notes index's analyzer)
version={VERSION}
name=analysis-common
classname=org.opensearch.analysis.common.CommonAnalysisPlugin
java.version=11
opensearch.version={VERSION}
extended.plugins=lang-painless
has.native.controller=false
"""


def _add_analysis_common() -> None:
    """The ``analysis-common`` module (tokenizers and filters beyond the standard ones); idempotent."""
    module = HOME / "modules" / "analysis-common"
    if (module / "plugin-descriptor.properties").is_file():
        return
    module.mkdir(parents=True, exist_ok=True)
    _maven(
        f"{DEPENDENCY_PLUGIN}:copy",
        f"-Dartifact=org.opensearch.plugin:analysis-common:{VERSION}",
        f"-DoutputDirectory={module}",
    )
    (module / "plugin-descriptor.properties").write_text(_ANALYSIS_DESCRIPTOR)


def prepare() -> Path:
    """The OpenSearch home with k-NN (and analysis-common) installed, fetched and assembled on first use; idempotent.

    One process at a time: two test workers (or a test run and ``make bench``) that both find no home would
    otherwise remove and unpack it under each other."""
    _make_reachable_folder(CACHE)
    with (CACHE / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        home = _prepare()
        if AS_ROOT:
            _open_to_the_node(home)
        return home


def _make_reachable_folder(folder: Path) -> None:
    """``folder`` and its missing parents, each one that is created open to all (a umask of 077 would leave
    them root's alone); then check that the node's user can enter every folder on the way to it."""
    missing = [path for path in (folder, *folder.parents) if not path.exists()]
    for path in reversed(missing):
        path.mkdir(exist_ok=True)
        path.chmod(0o755)
    if AS_ROOT:
        closed = [str(path) for path in (folder, *folder.parents) if not path.stat().st_mode & stat.S_IXOTH]
        if closed:
            raise NodeUnavailable(f"{NODE_USER[0]}, who runs the node, cannot enter {', '.join(closed)}")


def _open_to_the_node(home: Path) -> None:
    """Every folder of the installation enterable and every file readable by the node's user, whatever the
    umask it was unpacked and assembled under; its scripts executable."""
    for path in (home, *home.rglob("*")):
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode) or (stat.S_ISREG(mode) and mode & stat.S_IXUSR):
            wanted = mode | 0o555
        elif stat.S_ISREG(mode):
            wanted = mode | 0o444
        else:
            continue
        if wanted != mode:
            path.chmod(wanted)


def _prepare() -> Path:
    if (HOME / "plugins" / "opensearch-knn").is_dir():
        _add_analysis_common()
        return HOME
    CACHE.mkdir(parents=True, exist_ok=True)
    for artifact in (DISTRIBUTION, KNN):
        _maven(f"{DEPENDENCY_PLUGIN}:copy", f"-Dartifact={artifact}", f"-DoutputDirectory={CACHE}")
    shutil.rmtree(HOME, ignore_errors=True)
    with zipfile.ZipFile(CACHE / f"opensearch-{VERSION}.zip") as archive:
        archive.extractall(CACHE)
    for script in (HOME / "bin").iterdir():
        script.chmod(0o755)
    painless = HOME / "modules" / "lang-painless"
    painless.mkdir()
    (CACHE / "pom.xml").write_text(_PAINLESS_POM)
    _maven(
        f"{DEPENDENCY_PLUGIN}:copy-dependencies",
        f"-DoutputDirectory={painless}",
        f"-DincludeArtifactIds={','.join(_PAINLESS_JARS)}",
    )
    (painless / "plugin-descriptor.properties").write_text(_PAINLESS_DESCRIPTOR)
    (painless / "plugin-security.policy").write_text(_PAINLESS_POLICY)
    subprocess.run(
        [
            str(HOME / "bin" / "opensearch-plugin"),
            "install",
            "--batch",
            f"file://{CACHE}/opensearch-knn-{VERSION}.0.zip",
        ],
        env={**os.environ, "OPENSEARCH_JAVA_HOME": java_home() or ""},
        check=True,
        capture_output=True,
    )
    _add_analysis_common()
    return HOME


def start_node(port: int, data: Path, **popen: Any) -> subprocess.Popen[bytes]:
    """A single-node cluster on 127.0.0.1:``port``, plain HTTP (the minimal distribution has no security plugin).

    Its configuration, data and logs live under ``data`` (the node writes its keystore into its config
    folder), so several nodes can share one installation. OpenSearch refuses to run as root: as root (a
    container, a CI box) the node runs as ``nobody``, owning ``data``.
    """
    config = data / "config"
    if not config.is_dir():
        shutil.copytree(HOME / "config", config)
        # The JVM's own files (GC log, crash reports, heap dumps) are relative to the installation: move them here.
        options = (config / "jvm.options").read_text()
        for relative in ("logs/", "HeapDumpPath=data"):
            absolute = relative.replace("logs/", f"{data}/logs/").replace("=data", f"={data}/data")
            options = options.replace(relative, absolute)
        (config / "jvm.options").write_text(options)
    for folder in (data / "data", data / "logs"):
        folder.mkdir(parents=True, exist_ok=True)
    command = [
        str(HOME / "bin" / "opensearch"),
        "-Ediscovery.type=single-node",
        "-Enetwork.host=127.0.0.1",
        f"-Ehttp.port={port}",
        f"-Epath.data={data / 'data'}",
        f"-Epath.logs={data / 'logs'}",
        "-Ecluster.routing.allocation.disk.threshold_enabled=false",
    ]
    if AS_ROOT:
        user, group = NODE_USER
        for path in (data, *data.rglob("*")):
            shutil.chown(path, user, group)
        command = ["setpriv", f"--reuid={user}", f"--regid={group}", "--clear-groups", "--", *command]
    home = java_home()
    env = {
        **os.environ,
        **({"OPENSEARCH_JAVA_HOME": home} if home else {}),
        "OPENSEARCH_PATH_CONF": str(config),
        "OPENSEARCH_JAVA_OPTS": HEAP,
    }
    return subprocess.Popen(command, env=env, cwd=data, **popen)


class NodeUnavailable(RuntimeError):
    """A throwaway node could not be had: no Java, nothing to install it from, or it did not start."""


@contextmanager
def throwaway_node(port: int, *, start_timeout_s: float = 120) -> Iterator[str]:
    """Install if needed, start a node with its data in a new temporary folder, wait until it answers, yield
    its endpoint; stop it and remove the folder afterwards. The test tier and ``make bench`` use it."""
    if java_home() is None:
        raise NodeUnavailable("no Java 17+ (set JAVA_HOME or put java on PATH)")
    if not (HOME / "plugins" / "opensearch-knn").is_dir() and shutil.which("mvn") is None:
        raise NodeUnavailable(f"OpenSearch is not in {CACHE} and Maven (mvn) is not there to fetch it")
    try:
        prepare()
    except (OSError, subprocess.CalledProcessError, RuntimeError) as error:
        raise NodeUnavailable(f"could not fetch or install OpenSearch: {error}") from error
    # Beside the installation, not in a private temporary folder: as root the node runs as nobody, who must reach it.
    nodes = CACHE / "nodes"
    _make_reachable_folder(nodes)
    data = Path(tempfile.mkdtemp(prefix="opensearch-node-", dir=nodes))
    data.chmod(0o755)
    endpoint = f"http://127.0.0.1:{port}"
    with (data / "node.log").open("wb") as log:
        node: subprocess.Popen[bytes] | None = None
        try:
            node = start_node(port, data, stdout=log, stderr=subprocess.STDOUT)
            _wait_until_healthy(node, endpoint, data / "node.log", start_timeout_s)
            yield endpoint
        finally:
            if node is not None:
                stop(node)
            shutil.rmtree(data, ignore_errors=True)


def _wait_until_healthy(node: subprocess.Popen[bytes], endpoint: str, log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if node.poll() is not None:
            raise NodeUnavailable(f"the node exited with {node.returncode}; see {log}")
        try:
            url = f"{endpoint}/_cluster/health?wait_for_status=yellow&timeout=1s"
            with urllib.request.urlopen(url, timeout=2) as answer:  # noqa: S310 - http to the node started here
                if json.load(answer)["status"] in ("yellow", "green"):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise NodeUnavailable(f"the node did not start within {timeout_s:g} s; see {log}")
        time.sleep(0.25)


def main() -> None:
    port = os.environ.get("OPENSEARCH_PORT", "9200")
    if not port.isdigit():
        raise SystemExit(f"OPENSEARCH_PORT must be a TCP port number, not {port!r}")
    prepare()
    print(f"OpenSearch {VERSION} (k-NN) on http://127.0.0.1:{port}; Ctrl-C stops it", file=sys.stderr, flush=True)
    node = start_node(int(port), CACHE / "node")
    try:
        raise SystemExit(node.wait())
    except KeyboardInterrupt:
        node.terminate()
        raise SystemExit(node.wait()) from None


if __name__ == "__main__":
    main()
