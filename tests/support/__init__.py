"""Helpers and fakes shared by the tests: no test module imports another.

The modules that hold shared fixtures are the conftest's ``pytest_plugins``; their ``assert`` statements are
rewritten as the tests' are (``tests/__init__.py``).
"""
