"""The night's in-memory fakes (``tests/support/fake_night``) against the contract of the stores they stand for
(``tests/support/night_contracts``), which DynamoDB meets too (tests/integration/test_night_contracts.py)."""

from __future__ import annotations

import pytest

from tests.support.night import NightWorld, night_world
from tests.support.night_contracts import *  # noqa: F403 - the contract's tests, run here on the fakes


@pytest.fixture
def night_stores() -> NightWorld:
    return night_world()
