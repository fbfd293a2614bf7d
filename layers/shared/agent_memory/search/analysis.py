"""English text analysis, the same on both recall paths: the table's BM25 (``search.bm25``) and the notes index.

A text becomes terms in four steps, and the index's analyzer (``INDEX_ANALYSIS``) is built from the same
four, so that a query finds the same notes whichever path answers:

1. **Words**: runs of letters, digits and ``_`` (Python's ``\\w+``; the index's ``pattern`` tokenizer
   splits on ``\\W+`` with Unicode character classes).
2. **Lower-cased** (``str.lower``; the index's ``lowercase`` filter).
3. **Stop words removed**: the Snowball English list (``STOP_WORDS``: articles, pronouns, auxiliaries,
   question words), given to the index's ``stop`` filter word for word. They carry no meaning for
   ranking; kept, they match most notes of a scope and dilute BM25's length normalisation.
4. **Stemmed** with the Snowball English stemmer (Porter2; PyStemmer, Snowball's C code, and the
   index's ``stemmer`` filter with ``language: porter2``, Lucene's port of the same Snowball program):
   ``cats`` and ``cat``, ``moved``, ``moving`` and ``move`` become one term. Porter2 rather than a
   plural-only stemmer (``minimal_english``) because memory notes are written in the past tense and
   asked about in the present ("moved to Lisbon" / "where does she live, did she move?"); Porter2 rather
   than KStem (``light_english``) because KStem is a dictionary stemmer with no Python twin, and the two
   paths must agree. **Irregular forms** come first (``IRREGULAR``: ``went``, ``gone`` and ``go``,
   ``met`` and ``meet``, ``bought`` and ``buy``, ``children`` and ``child``), since no suffix rule can
   reach them and conversation states in the past what is asked in the present ("I met this amazing
   woman in Canada" / "when did he meet his wife?"); the index gets the same table as a
   ``stemmer_override`` filter (each form to its base's stem, kept from the stemmer after it).

Stems are cached per process (a scope's vocabulary is a few thousand words: a dict look-up is cheaper
than even the C stemmer's call).
"""

from __future__ import annotations

import re
from typing import Any

import Stemmer  # PyStemmer: the Snowball stemmers in C (imports in 2 ms; the pure-Python package takes 200)

# The Snowball project's English stop list (snowball-website/algorithms/english/stop.txt): pronouns,
# auxiliaries and question words as well as articles. Lucene's default ``_english_`` set (33 words) keeps
# "what", "did", "she", "have": in a question put to memory ("what did she have for lunch?") those
# match half the notes of a scope and decide BM25's first hit (measured: docs/recall-quality.md).
_STOP_LIST = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these
those am is are was were be been being have has had having do does did doing would should could
ought i'm you're he's she's it's we're they're i've you've we've they've i'd you'd he'd she'd we'd
they'd i'll you'll he'll she'll we'll they'll isn't aren't wasn't weren't hasn't haven't hadn't
doesn't don't didn't won't wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's
who's what's here's there's when's where's why's how's a an the and but if or because as until while
of at by for with about against between into through during before after above below to from up down
in out on off over under again further then once here there when where why how all any both each few
more most other some such no nor not only own same so than too very s t d ll m re ve don doesn didn
isn aren wasn weren hasn haven hadn won wouldn shouldn couldn mustn shan
"""
# The list ends with what the word split leaves of contractions ("don't" is "don", "t").
STOP_WORDS = frozenset(_STOP_LIST.split())

# Irregular English forms, each group a base word then its forms (past, past participle, plural), read into
# ``IRREGULAR``. Left out, as more often another word than the form: saw, bound, rose, lit, bit, left, lay.
_IRREGULAR_LIST = """
arise arose arisen; awake awoke awoken; become became; begin began begun; bend bent; bite bitten;
bleed bled; blow blew blown; break broke broken; breed bred; bring brought; build built; burn burnt;
buy bought; catch caught; choose chose chosen; cling clung; come came; creep crept; deal dealt; dig dug;
draw drew drawn; dream dreamt; drink drank drunk; drive drove driven; eat ate eaten; fall fell fallen;
feed fed; feel felt; fight fought; find found; flee fled; fly flew flown; forbid forbade forbidden;
forget forgot forgotten; forgive forgave forgiven; freeze froze frozen; get got gotten; give gave given;
go went gone goes; grow grew grown; hang hung; hear heard; hide hid hidden; hold held; keep kept; kneel knelt;
know knew known; lead led; lean leant; learn learnt; lend lent; lose lost; make made; mean meant;
meet met; pay paid; ride rode ridden; ring rang rung; rise risen; run ran; say said; see seen;
seek sought; sell sold; send sent; shake shook shaken; shine shone; shoot shot; show shown;
shrink shrank shrunk; sing sang sung; sink sank sunk; sit sat; sleep slept; slide slid; speak spoke
spoken; spend spent; spin spun; spring sprang sprung; stand stood; steal stole stolen; stick stuck;
sting stung; stink stank stunk; strike struck; swear swore sworn; sweep swept; swim swam swum;
swing swung; take took taken; teach taught; tear tore torn; tell told; think thought; throw threw
thrown; understand understood; wake woke woken; wear wore worn; weep wept; win won; write wrote written;
child children; man men; woman women; person people; mouse mice; foot feet; tooth teeth
"""
_STEMMER = Stemmer.Stemmer("english")
# Each irregular form to its base word's stem: the term it shares with the base and the base's regular forms.
IRREGULAR: dict[str, str] = {
    form: _STEMMER.stemWord(base)
    for base, *forms in (group.split() for group in _IRREGULAR_LIST.split(";"))
    for form in forms
}
ANALYZER = "memory_english"
# The notes index's analysis settings: the four steps above, in OpenSearch's terms.
INDEX_ANALYSIS: dict[str, Any] = {
    "tokenizer": {"memory_words": {"type": "pattern", "pattern": "\\W+", "flags": "UNICODE_CHARACTER_CLASS"}},
    "filter": {
        "memory_stop": {"type": "stop", "stopwords": sorted(STOP_WORDS)},
        "memory_irregular": {
            "type": "stemmer_override",
            "rules": [f"{form} => {stem}" for form, stem in sorted(IRREGULAR.items())],
        },
        "memory_stem": {"type": "stemmer", "language": "porter2"},
    },
    "analyzer": {
        ANALYZER: {
            "type": "custom",
            "tokenizer": "memory_words",
            "filter": ["lowercase", "memory_stop", "memory_irregular", "memory_stem"],
        }
    },
}

_WORD = re.compile(r"\w+")
_STEMS: dict[str, str] = {}
_STEM_CACHE_MAX = 200_000
# The cache is bounded in characters too: only words of a real vocabulary are kept (a 1 MB "word" in a
# query is stemmed, not cached), so it never holds more than about 200,000 x 32 characters.
_STEM_CACHE_WORD_MAX = 32


def _stem(word: str) -> str:
    stem = _STEMS.get(word)
    if stem is None:
        stem = IRREGULAR.get(word) or _STEMMER.stemWord(word)
        if len(_STEMS) < _STEM_CACHE_MAX and len(word) <= _STEM_CACHE_WORD_MAX:
            _STEMS[word] = stem
    return stem


def terms(text: str) -> list[str]:
    """The text's terms, in order: words, lower-cased, without stop words, stemmed."""
    return [_stem(word) for word in _WORD.findall(text.lower()) if word not in STOP_WORDS]
