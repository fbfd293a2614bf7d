"""The memory service's ports as the DynamoDB stores keep them (tests/support/store_contracts.py): the same
contracts the in-memory fakes pass in tests/unit/test_fake_store_contracts.py."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from tests.support.store_contracts import CONTRACTS, dynamodb_stores


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda contract: contract.__name__)
def test_the_dynamodb_stores_keep_the_contract(contract, aws: Any) -> None:
    contract(partial(dynamodb_stores, aws))
