"""The corpus of tests/secrets_samples.py on every write path (docs/security.md "Redaction"): 150+ secrets,
each also with a zero-width, a bidi and a separator character inserted, and 60+ benign look-alikes.
No secret survives anywhere in the table; at most 2% of the benign texts change. The figures are printed
(``pytest -s``) and recorded by ``python -m bench.redaction --record`` in docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.redaction_paths import PATHS, measure


@pytest.mark.parametrize("path", list(PATHS))
def test_no_secret_survives_and_benign_texts_stay(aws, path):
    figures = measure(path, aws)
    print(f"{path}: {figures}")

    assert figures["secrets"] >= 150 and figures["benign"] >= 60
    assert figures["surviving"] == 0, figures["survivor_kinds"]
    assert figures["surviving_inserted"] == 0, figures["survivor_kinds"]
    assert figures["benign_changed"] <= 0.02 * figures["benign"], figures["changed_examples"]
