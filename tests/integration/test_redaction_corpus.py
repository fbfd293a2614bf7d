"""The corpus of tests/support/secrets_samples.py on every write path (docs/security.md "Redaction"): 150+ secrets, as
written and with U+200B, U+202E, U+2060, U+2028 or U+2029 inserted inside each and a separator at its white
space; 70+ benign look-alikes and 400+ benign technical texts (tests/support/benign_samples.py). No secret survives
anywhere a path stores; at most one benign look-alike in 35 and 2% of the technical texts change. Each path's
figures are printed as one line (``pytest -s``) and recorded by ``python -m bench.redaction --record`` in
docs/benchmarks.md, which writes the whole corpus through each path into moto.

Here the corpus runs through each path's pipeline alone (``redaction_paths.PIPELINES``: the write paths it
names and the form it stores, a document path's texts joined into its documents), under a second a path, and a
sample holding every kind of secret and every way of writing one, with benign texts, goes through each path's
real writes: the path stores exactly what its pipeline makes of them, and none of their secrets is anywhere in
the table. Together they
prove what writing the corpus through every path did, in seconds rather than the 7 minutes of some 13,000
writes to moto (440 s on CI's two loaded workers).
"""

from __future__ import annotations

import pytest

from tests.support.benign_samples import BENIGN_TECHNICAL
from tests.support.redaction_paths import (
    PATHS,
    PIPELINES,
    corpus_ways,
    measure_pipeline,
    prepared,
    stored_texts,
    summary,
)
from tests.support.secrets_samples import BENIGN, Secret, survives


def test_every_write_path_has_its_pipeline() -> None:
    assert set(PIPELINES) == set(PATHS)


@pytest.mark.parametrize("path", list(PATHS))
def test_no_secret_survives_and_benign_texts_stay(path: str) -> None:
    figures = measure_pipeline(path)
    print(summary(path, figures))

    assert figures["secrets"] >= 150 and figures["benign"] >= 70 and figures["technical"] >= 400
    assert set(figures["surviving"]) == {"none", "U+200B", "U+202E", "U+2060", "U+2028", "U+2029", "separator"}
    assert all(count == 0 for count in figures["surviving"].values()), figures["survivor_kinds"]
    assert figures["benign_changed"] * 35 <= figures["benign"], figures["changed_examples"]
    assert figures["technical_changed"] <= 0.02 * figures["technical"], figures["changed_examples"]


def every_kind_and_every_way() -> list[Secret]:
    """Two secrets of each way (as written, and each way of inserting a character), of kinds that rotate from one
    way to the next, so that the sample holds every kind (11) and every way (7) in 14 secrets."""
    ways = list(corpus_ways().values())
    kinds = sorted({secret.kind for secret in ways[0]})
    firsts = [{secret.kind: secret for secret in reversed(secrets)} for secrets in ways]
    return [firsts[way][kinds[(2 * way + turn) % len(kinds)]] for way in range(len(ways)) for turn in (0, 1)]


@pytest.mark.parametrize("path", list(PATHS))
def test_each_path_stores_what_its_pipeline_makes_and_no_secret_reaches_the_table(aws, path: str) -> None:
    secrets = every_kind_and_every_way()
    texts = [secret.text for secret in secrets] + BENIGN[:2] + BENIGN_TECHNICAL[:2]

    stored = PATHS[path]("wiring", texts)

    assert stored == prepared(path, texts)[0]
    table = stored_texts(aws)["wiring"]
    assert [secret.text for secret in secrets if survives(secret.secret, table)] == []
    assert len({secret.kind for secret in secrets}) == len({secret.kind for secret in corpus_ways()["none"]})
    assert all(text in table for text in stored[-4:])  # the benign texts, as stored, are in the table
