"""The corpus of tests/secrets_samples.py on every write path (docs/security.md "Redaction"): 150+ secrets, as
written and with U+200B, U+202E, U+2060, U+2028 or U+2029 inserted inside each and a separator at its white
space; 70+ benign look-alikes and 400+ benign technical texts (tests/benign_samples.py). No secret survives
anywhere in the table; at most one benign look-alike in 35 and 2% of the technical texts change. Each path's
figures are printed as one line (``pytest -s``) and recorded by ``python -m bench.redaction --record`` in
docs/benchmarks.md."""

from __future__ import annotations

import pytest

from tests.redaction_paths import PATHS, measure, summary


@pytest.mark.parametrize("path", list(PATHS))
def test_no_secret_survives_and_benign_texts_stay(aws, path):
    figures = measure(path, aws)
    print(summary(path, figures))

    assert figures["secrets"] >= 150 and figures["benign"] >= 70 and figures["technical"] >= 400
    assert set(figures["surviving"]) == {"none", "U+200B", "U+202E", "U+2060", "U+2028", "U+2029", "separator"}
    assert all(count == 0 for count in figures["surviving"].values()), figures["survivor_kinds"]
    assert figures["benign_changed"] * 35 <= figures["benign"], figures["changed_examples"]
    assert figures["technical_changed"] <= 0.02 * figures["technical"], figures["changed_examples"]
