"""`make test`'s two workers: the groups that keep tests together, and the order the controller hands them out
(tests/support/scheduling.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.scheduling import GroupScheduling, group_of, in_handout_order

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class FakeItem:
    """What the scheduling reads of a collected test: its file, the rootdir, its marks."""

    file: str
    name: str
    marks: tuple[str, ...] = ()
    config: Any = field(default_factory=lambda: SimpleNamespace(rootpath=ROOT))

    @property
    def path(self) -> Path:
        return ROOT / self.file

    def get_closest_marker(self, name: str) -> object | None:
        return getattr(pytest.mark, name) if name in self.marks else None


def _order(items: list[Any]) -> list[str]:
    return [f"{item.path.relative_to(ROOT)}::{item.name}" for item in in_handout_order(items)]


def _group(file: str) -> str:
    item: Any = FakeItem(file, "t")
    return group_of(item)


def test_a_file_is_a_group_and_a_one_worker_tier_is_one() -> None:
    assert _group("tests/unit/test_a.py") == "tests/unit/test_a.py"
    assert _group("tests/opensearch/test_b.py") == "opensearch"
    assert _group("tests/dashboard/sub/test_c.py") == "dashboard"


def test_a_group_with_a_long_test_then_one_with_a_slow_test_is_handed_out_before_bigger_groups_in_its_order() -> None:
    items: list[Any] = [
        FakeItem("tests/unit/test_small.py", "one"),
        FakeItem("tests/unit/test_big.py", "one"),
        FakeItem("tests/opensearch/test_x.py", "one"),
        FakeItem("tests/unit/test_big.py", "two"),
        FakeItem("tests/plain_moto/test_night.py", "first"),
        FakeItem("tests/opensearch/test_y.py", "one"),
        FakeItem("tests/plain_moto/test_night.py", "second", marks=("long",)),
        FakeItem("tests/unit/test_big.py", "three"),
        FakeItem("tests/property/test_iso.py", "one", marks=("long",)),
        FakeItem("tests/e2e/test_stack.py", "one", marks=("slow",)),
    ]

    assert _order(items) == [
        "tests/plain_moto/test_night.py::first",  # a long test's whole file, in its order
        "tests/plain_moto/test_night.py::second",
        "tests/property/test_iso.py::one",
        "tests/e2e/test_stack.py::one",  # then a slow test's
        "tests/unit/test_big.py::one",  # then by number of tests, ties in collection order
        "tests/unit/test_big.py::two",
        "tests/unit/test_big.py::three",
        "tests/opensearch/test_x.py::one",
        "tests/opensearch/test_y.py::one",
        "tests/unit/test_small.py::one",
    ]


def test_the_scheduler_keeps_a_files_tests_and_a_tiers_together_as_pytest_9_names_them() -> None:
    """A worker reports its tests by node id, without the ``@group`` suffix that pytest-xdist's own ``loadgroup``
    expects (pytest 9 ignores its ``item._nodeid``): the scheduler reads the group from the file's path."""
    scheduler = object.__new__(GroupScheduling)  # the scope of a node id needs nothing of a run
    scopes = {
        nodeid: scheduler._split_scope(nodeid)
        for nodeid in (
            "tests/unit/test_a.py::test_one",
            "tests/unit/test_a.py::test_two[x-1]",
            "tests/unit/test_a.py::Case::test_three",
            "tests/opensearch/test_b.py::test_one",
            "tests/opensearch/test_c.py::test_two@opensearch",
        )
    }

    assert set(scopes.values()) == {"tests/unit/test_a.py", "opensearch"}, scopes


def test_every_run_on_workers_keeps_the_order_the_workers_list() -> None:
    """pytest-xdist would sort the groups by their number of tests again (its default ``--loadscope-reorder``)."""
    runs = [line for line in (ROOT / "Makefile").read_text().splitlines() if re.search(r"pytest .*-n \d", line)]

    assert runs
    assert [line for line in runs if "--dist loadgroup --no-loadscope-reorder" not in line] == []
