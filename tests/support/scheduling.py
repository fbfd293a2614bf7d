"""How `make test` spreads the suite over its two pytest-xdist workers (``--dist loadgroup``): each test's group,
and the order in which the controller hands the groups out."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

# Tiers whose tests share one session fixture (an OpenSearch node, the dashboard's stack and browser) or the
# repository's build output (sam build): each runs on one worker of `make test`'s two.
ONE_WORKER_TIERS = frozenset({"opensearch", "dashboard", "infra"})


def group_of(item: pytest.Item) -> str:
    """A test file stays on one worker (its module fixtures start once, a test may read what an earlier one of
    its file recorded), and so does each tier of ``ONE_WORKER_TIERS``."""
    parts = item.path.relative_to(item.config.rootpath).parts
    return parts[1] if len(parts) > 2 and parts[1] in ONE_WORKER_TIERS else "/".join(parts)


def in_handout_order(items: Sequence[pytest.Item]) -> list[pytest.Item]:
    """The items, group by group, in the order the controller is to hand the groups out (``--no-loadscope-reorder``
    keeps the workers' order): a group holding a ``long`` test first, then the others by their number of tests, as
    pytest-xdist orders them by itself; the items of a group keep their order.

    By number of tests alone, a file of one or two long tests was handed out among the last, and the other worker
    sat idle while it ran: the 120-scope night (about 5 minutes) started in the run's last minutes."""
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        groups.setdefault(group_of(item), []).append(item)
    ordered = sorted(
        groups.values(), key=lambda group: (not any(i.get_closest_marker("long") for i in group), -len(group))
    )
    return [item for group in ordered for item in group]
