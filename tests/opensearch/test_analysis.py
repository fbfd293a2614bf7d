"""The table's BM25 and the index treat English alike (search.analysis): the same terms, the same matches."""

from __future__ import annotations

import pytest

from agent_memory.domain.notes import Note, Origin
from agent_memory.search.analysis import ANALYZER, terms
from agent_memory.search.bm25 import rank

pytestmark = pytest.mark.slow

TEXTS = [
    "She MOVED to Lisbon in 2023, and is moving again",
    "Adopted two cats; the kittens' names are Miso and Tofu",
    "The team deploys the billing-service every Tuesday at 09:30",
    "Allergies: peanuts, shellfish. Don't order Thai!",
    "naïve café owners' résumés, 3.5 stars, user_id u-17",
    "We went to Jasper, met her parents and bought gifts; the children saw a rose bit",
]

NOTES = [
    "She moved to Lisbon last year",
    "Adopted two cats from the shelter",
    "Deploys the billing service on Fridays",
    "Met his wife in Canada",
]
QUERIES = [("where is she moving?", 1), ("any cat?", 2), ("when was billing deployed", 3), ("where did he meet?", 4)]


def _note(position, text):
    return Note("2026-12-03", position, text, "2026-12-03T10:15:00.000Z", "remember", Origin("u-1", "t-1"))


@pytest.mark.parametrize("text", TEXTS)
def test_the_index_analyzer_makes_the_same_terms_as_the_tables_bm25(notes_index, opensearch_client, text):
    answer = opensearch_client.indices.analyze(index=notes_index.name, body={"analyzer": ANALYZER, "text": text})

    assert [token["token"] for token in answer["tokens"]] == terms(text)


@pytest.mark.parametrize(("query", "position"), QUERIES)
def test_a_plural_verb_or_irregular_form_mismatch_is_found_on_both_paths(notes_index, query, position):
    notes_index.put_many("user#u-1", [_note(n, text) for n, text in enumerate(NOTES, start=1)])
    notes_index.refresh()

    in_index = [hit.position for hit in notes_index.keyword("user#u-1", query, k=3).hits]
    in_table = [r.index + 1 for r in rank(query, NOTES)]

    assert in_index[0] == in_table[0] == position
