"""The test suite (docs/testing.md)."""

import pytest

# The shared helpers' asserts report their values as the tests' do; registered before anything imports them.
pytest.register_assert_rewrite("tests.support")
