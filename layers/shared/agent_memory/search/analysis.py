"""English text analysis, the same on both recall paths: the table's BM25 (``search.bm25``) and the notes index.

A text becomes terms in four steps, and the index's analyzer (``INDEX_ANALYSIS``) is built from the same
four, so that a query finds the same notes whichever path answers:

1. **Words**: runs of letters, digits and ``_`` (Python's ``\\w+``; the index's ``pattern`` tokenizer
   splits on ``\\W+`` with Unicode character classes).
2. **Lower-cased** (``str.lower``; the index's ``lowercase`` filter).
3. **Stop words removed**: Lucene's English set (``_english_``, 33 words such as ``the``, ``is``,
   ``and``), which carry no meaning for ranking and only dilute BM25's length normalisation.
4. **Stemmed** with the Snowball English stemmer (Porter2; ``snowballstemmer``, pure Python, and the
   index's ``stemmer`` filter with ``language: porter2``, Lucene's port of the same Snowball program):
   ``cats`` and ``cat``, ``moved``, ``moving`` and ``move`` become one term. Porter2 rather than a
   plural-only stemmer (``minimal_english``) because memory notes are written in the past tense and
   asked about in the present ("moved to Lisbon" / "where does she live, did she move?"); Porter2 rather
   than KStem (``light_english``) because KStem is a dictionary stemmer with no Python twin, and the two
   paths must agree.

Stems are cached per process (a scope's vocabulary is a few thousand words; the pure-Python stemmer
costs about 10 µs a word the first time, a dict look-up after).
"""

from __future__ import annotations

import re
from typing import Any

import snowballstemmer

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which OpenSearch's ``_english_`` stop list is.
STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no",
    "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this",
    "to", "was", "will", "with",
})  # fmt: skip

ANALYZER = "memory_english"
# The notes index's analysis settings: the four steps above, in OpenSearch's terms.
INDEX_ANALYSIS: dict[str, Any] = {
    "tokenizer": {"memory_words": {"type": "pattern", "pattern": "\\W+", "flags": "UNICODE_CHARACTER_CLASS"}},
    "filter": {
        "memory_stop": {"type": "stop", "stopwords": "_english_"},
        "memory_stem": {"type": "stemmer", "language": "porter2"},
    },
    "analyzer": {
        ANALYZER: {"type": "custom", "tokenizer": "memory_words", "filter": ["lowercase", "memory_stop", "memory_stem"]}
    },
}

_WORD = re.compile(r"\w+")
_STEMMER = snowballstemmer.stemmer("english")
_STEMS: dict[str, str] = {}
_STEM_CACHE_MAX = 200_000


def _stem(word: str) -> str:
    stem = _STEMS.get(word)
    if stem is None:
        stem = _STEMMER.stemWord(word)
        if len(_STEMS) < _STEM_CACHE_MAX:
            _STEMS[word] = stem
    return stem


def terms(text: str) -> list[str]:
    """The text's terms, in order: words, lower-cased, without stop words, stemmed."""
    return [_stem(word) for word in _WORD.findall(text.lower()) if word not in STOP_WORDS]
