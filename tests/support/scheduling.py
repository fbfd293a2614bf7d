"""How `make test` spreads the suite over its two pytest-xdist workers (``--dist loadgroup``): each test's group,
kept on one worker, and the order in which the controller hands the groups out."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

import pytest
from xdist.scheduler import LoadScopeScheduling

# Tiers whose tests share one session fixture (an OpenSearch node, the dashboard's stack and browser) or the
# repository's build output (sam build): each runs on one worker of `make test`'s two.
ONE_WORKER_TIERS = frozenset({"opensearch", "dashboard", "infra"})


def _group(parts: Sequence[str]) -> str:
    """A test file stays on one worker (its module fixtures start once, a test may read what an earlier one of
    its file recorded), and so does each tier of ``ONE_WORKER_TIERS``."""
    return parts[1] if len(parts) > 2 and parts[1] in ONE_WORKER_TIERS else "/".join(parts)


def group_of(item: pytest.Item) -> str:
    return _group(item.path.relative_to(item.config.rootpath).parts)


class GroupScheduling(LoadScopeScheduling):
    """pytest-xdist's scope scheduling (a scope's tests go to one worker, together), each test's scope its group.

    pytest-xdist's own ``loadgroup`` reads ``xdist_group`` marks into the node ids (``item._nodeid``), which
    pytest 9 keeps elsewhere (``item._id``): the marks changed nothing, every test was a unit of its own, and a
    file's tests and a tier's went to both workers, each starting their module and session fixtures (the
    TypeScript client's local stack twice, 28 s each)."""

    def _split_scope(self, nodeid: str) -> str:
        return _group(PurePosixPath(nodeid.split("::", 1)[0]).parts)


def in_handout_order(items: Sequence[pytest.Item]) -> list[pytest.Item]:
    """The items, group by group, in the order the controller is to hand the groups out (``--no-loadscope-reorder``
    keeps the workers' order): a group holding a ``long`` test first, then one holding a ``slow`` one (a local stack,
    an external tool: seconds a test), then the others by their number of tests, as pytest-xdist orders them by
    itself, so that the unit tier's quick files fill the end of the run; the items of a group keep their order.

    A long test handed out late runs on while the other worker has nothing left: the 120-scope night took 5
    minutes."""
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        groups.setdefault(group_of(item), []).append(item)
    ordered = sorted(
        groups.values(), key=lambda group: (not _marked(group, "long"), not _marked(group, "slow"), -len(group))
    )
    return [item for group in ordered for item in group]


def _marked(group: list[pytest.Item], mark: str) -> bool:
    return any(item.get_closest_marker(mark) for item in group)
