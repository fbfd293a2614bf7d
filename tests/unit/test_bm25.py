"""The keyword ranking: which notes match, and BM25's order among them."""

from __future__ import annotations

import pytest

from agent_memory.search.bm25 import MAX_QUERY_TERMS, Collection, query_terms, rank, rank_terms, words


def test_words_are_lower_cased_split_on_anything_but_letters_and_digits_and_stemmed():
    assert words("Prefers METRIC units, ISO-8601 dates; Straße") == [
        "prefer",
        "metric",
        "unit",
        "iso",
        "8601",
        "date",
        "straße",  # lower-cased as Lucene does (no case folding to "ss")
    ]


def test_english_stop_words_are_dropped():
    assert words("The cat is on the mat, and it was there") == ["cat", "mat"]


@pytest.mark.parametrize(
    ("note", "query"),
    [("Adopted two cats last spring", "cat"), ("She moved to Lisbon", "moving"), ("Deploys on Fridays", "deployed")],
)
def test_plural_and_verb_forms_match(note, query):
    assert [r.index for r in rank(query, ["an unrelated note", note])] == [1]


@pytest.mark.parametrize(
    ("note", "query"),
    [
        ("I met this amazing woman in Canada", "when did he meet his wife?"),
        ("We went to the Rockies last weekend", "where does he go on road trips?"),
        ("Got a puppy from the shelter", "what did she get?"),
        ("Bought a new Prius after the old one broke down", "what car did he buy?"),
        ("The children loved the beach", "does she have a child?"),
    ],
)
def test_irregular_forms_match_their_base_word(note, query):
    assert [r.index for r in rank(query, ["an unrelated note", note])] == [1]


def test_an_irregular_form_is_one_term_with_its_base_and_its_regular_forms():
    assert words("went gone go goes going") == ["go"] * 5
    assert words("bought buys buying") == ["buy"] * 3


def test_words_that_are_more_often_something_else_are_left_alone():
    assert words("saw rose bit left") == ["saw", "rose", "bit", "left"]


def test_query_terms_are_distinct_and_bounded():
    assert query_terms("tea Tea TEA coffee") == ["tea", "coffe"]
    assert len(query_terms(" ".join(f"w{i}" for i in range(5000)))) == MAX_QUERY_TERMS


def test_a_long_query_ending_with_its_one_distinctive_word_finds_it():
    """Only the first 64 query terms used to count: a note matching the 65th was never found."""
    filler = " ".join(f"filler{i}" for i in range(100))
    texts = ["the quarterly budget review", "lunch with the platform team"]

    assert [r.index for r in rank(f"{filler} budget", texts)] == [0]


def test_past_the_bound_the_rarest_terms_are_kept_not_the_first():
    common = " ".join(f"w{i}" for i in range(MAX_QUERY_TERMS + 10))
    texts = [common, common, "the kestrel project"]

    kept = query_terms(f"{common} kestrel", texts)

    assert len(kept) == MAX_QUERY_TERMS and "kestrel" in kept
    assert 2 in [r.index for r in rank(f"{common} kestrel", texts)]


def test_the_stem_cache_keeps_no_huge_word():
    from agent_memory.search import analysis

    before = len(analysis._STEMS)
    for letter in "abcdefghij":
        analysis.terms(letter * 1_000_000)

    assert len(analysis._STEMS) == before


def test_only_texts_holding_a_query_word_come_back():
    texts = ["likes green tea", "drives a blue car", "TEA at noon", "teapot collector"]

    assert sorted(r.index for r in rank("tea", texts)) == [0, 2]


@pytest.mark.parametrize("query", ["", "   ", "?!", "—"])
def test_a_query_without_words_matches_nothing(query):
    assert rank(query, ["anything at all"]) == []


def test_no_texts_no_hits():
    assert rank("tea", []) == []


def test_more_distinctive_words_rank_higher_at_similar_length():
    """Given two notes of the same length, the one holding both rare query words comes first."""
    texts = [
        "the user deploys the api service on tuesday morning",  # one query word
        "the user deploys the kubernetes cluster on friday evening",  # two query words
        "the user likes tea",
        "the user likes coffee",
    ]

    ranked = rank("kubernetes cluster deploys", texts)

    assert [r.index for r in ranked] == [1, 0]
    assert ranked[0].score > ranked[1].score > 0


def test_a_rare_word_outweighs_a_common_one():
    texts = ["project alpha review", "project beta review", "project gamma review", "project delta review"]

    ranked = rank("project gamma", texts)

    assert ranked[0].index == 2
    assert ranked[0].score > ranked[1].score


def test_a_shorter_note_with_the_same_match_ranks_higher():
    texts = ["tea " + "filler " * 30, "tea time"]

    assert [r.index for r in rank("tea", texts)] == [1, 0]


def test_ties_keep_the_given_order_so_the_newer_note_comes_first():
    texts = ["likes tea", "likes tea", "likes tea"]

    assert [r.index for r in rank("tea", texts)] == [0, 1, 2]


def test_a_collections_statistics_decide_over_the_candidates_own():
    """The index's candidates are a sample of the scope: the scope's counts give the idf, not the sample's."""
    bags = [words("Maya went hiking with Maya's sister"), words("The kitten is called Miso")]
    terms = query_terms("does Maya have a kitten?")

    alone = rank_terms(terms, bags)
    scope = Collection(documents=300, holding={"maya": 290, "kitten": 1})
    rescored = rank_terms(terms, bags, collection=scope)

    assert [r.index for r in alone] == [0, 1]  # in the two candidates alone, both words are as rare
    assert [r.index for r in rescored] == [1, 0]  # in the scope, the name is in nearly every note


def test_a_collection_never_counts_fewer_holders_than_the_candidates_show():
    """A count that lags the candidates (an index being written) is raised to what they hold: idf stays finite
    and a term held by every candidate is never the rarest."""
    bags = [words("kitten"), words("kitten and puppy")]

    ranked = rank_terms(query_terms("kitten puppy"), bags, collection=Collection(documents=1, holding={"kitten": 0}))

    assert [r.index for r in ranked] == [1, 0]
    assert all(r.score > 0 for r in ranked)
