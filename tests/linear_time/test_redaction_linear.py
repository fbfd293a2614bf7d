"""No regular expression an attacker can stall (docs/security.md "Redaction"): every detector is linear.

Each detector runs on 200 KB inputs built to make a backtracking pattern slow (tests/support/redos_inputs.py); the
bound is generous (a loaded two-core machine), the exact figures are in docs/benchmarks.md. The old
``password-in-url`` pattern took 24 s on the first of them. The patterns themselves are checked too: no
quantifier without an upper bound unless it is possessive (it never gives back what it read)."""

from __future__ import annotations

import re
import time
from re import _constants as constants  # type: ignore[attr-defined]
from re import _parser as parser  # type: ignore[attr-defined]

import pytest

from agent_memory.domain.redaction import DETECTORS, redact
from tests.support.redos_inputs import ADVERSARIAL, SIZE

# 20 times the 50 ms target: card-number takes 0.15 s at a load of 4 on two cores; the old pattern took 24 s.
DETECTOR_BOUND_S = 1.0
REDACT_BOUND_S = 2.0  # the whole table, with email and phone
ALL = frozenset({"email", "phone"})


def best_of(runs: int, work) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_every_detector_is_fast_on_an_adversarial_input(name):
    text = ADVERSARIAL[name]
    assert len(text) == SIZE

    slow = {
        f"{index}:{detector.kind}": seconds
        for index, detector in enumerate(DETECTORS)
        if (seconds := best_of(2, lambda detector=detector: list(detector.spans(text)))) > DETECTOR_BOUND_S
    }

    assert slow == {}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_the_whole_redaction_is_fast_on_an_adversarial_input(name):
    assert best_of(2, lambda: redact(ADVERSARIAL[name], extra=ALL)) < REDACT_BOUND_S


def _unbounded(pattern: str) -> list[str]:
    """The quantifiers of ``pattern`` that may repeat without bound and give back what they read."""
    found: list[str] = []

    def walk(items) -> None:
        for op, value in items:
            if op in (constants.MAX_REPEAT, constants.MIN_REPEAT):
                low, high, body = value
                if high == constants.MAXREPEAT:
                    found.append(f"{op} {low}..")
                walk(body)
            elif op == constants.POSSESSIVE_REPEAT:
                walk(value[2])
            elif op == constants.BRANCH:
                for branch in value[1]:
                    walk(branch)
            elif op == constants.SUBPATTERN:
                walk(value[3])
            elif op in (constants.ASSERT, constants.ASSERT_NOT):
                walk(value[1])
            elif op == constants.ATOMIC_GROUP:
                walk(value)

    walk(parser.parse(pattern))
    return found


@pytest.mark.parametrize("index", range(len(DETECTORS)))
def test_no_pattern_repeats_without_bound_unless_possessive(index):
    assert _unbounded(DETECTORS[index].pattern.pattern) == []


def test_the_check_finds_the_old_quadratic_pattern():
    old = r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@"

    assert len(_unbounded(old)) == 3
    assert _unbounded(r"a{1,40}b*+[^-]++") == []
    assert re.compile(old)  # still a valid pattern: the check reads it, it does not reject it
