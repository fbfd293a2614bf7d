"""Helpers and fakes shared by the tests: no test module imports another.

Their ``assert`` statements are rewritten as the tests' are (pytest reports the values), and the modules that
hold shared fixtures are the conftest's ``pytest_plugins``.
"""

import pytest

pytest.register_assert_rewrite("tests.support")
