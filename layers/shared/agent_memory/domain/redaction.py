"""Secret redaction on every write path (docs/api.md §6 "Redaction"), before anything is stored or logged.

``DETECTORS`` is the table (``secret_detectors``): one row per kind of secret, each linear in its input. A
deployment extends it by adding rows (e.g. an internal token format) with ``register``; ``email`` and
``phone`` are off unless ``MEMORY_REDACT_EXTRA`` names them. Each secret found is replaced by
``[redacted: <kind>]``; the text around it is kept.

The detectors read a *view* of the text in which the invisible format characters (zero-width, bidi
controls, the BOM), the other control characters (what note cleaning removes) and the variation selectors
(invisible, but kept by cleaning: an emoji needs its own) are left out, so that none
of them can split a secret that a reader, a model or cleaning would put back together. A text holding a
separator nobody types inside a secret (U+2028, U+2029, U+0085, NBSP...: ``SEPARATORS``) is read twice,
once with each of them a space and once with them left out, and what either reading finds is replaced. What
a detector finds in a view is replaced in the text itself, the characters left out inside it included.

Work is bounded: a text longer than ``MAX_CHARS`` is refused before any detector runs (the write paths cap
or refuse their inputs below it first), and every detector is linear (``secret_detectors``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from agent_memory.basics.errors import InvalidInput
from agent_memory.basics.observability import metrics
from agent_memory.domain.fence import INVISIBLE
from agent_memory.domain.secret_detectors import DETECTORS, KINDS, Detector, Span, find, luhn, register

__all__ = [
    "DETECTORS",
    "EXTRA_KINDS",
    "KINDS",
    "MAX_CHARS",
    "Detector",
    "Redacted",
    "luhn",
    "marker",
    "redact",
    "register",
]

# The longest text any write path hands to ``redact``: a document that compression could still bring under
# the hard limit is at most 125,000 characters (docs/api.md §3); 200,000 leaves room and bounds the work.
MAX_CHARS = 200_000

# The separators nobody types between the characters of a secret: every white space character but the space,
# the tab and the line break (U+2028, U+2029, U+0085, the vertical tab, NBSP, the typographic spaces...).
# Cleaning turns the line-like ones into a space; one inserted into a secret splits it for a detector that
# reads it as a space, and a reader, a model or a copy joins it again. So the detectors read a text that
# holds one twice: each of them a space, and each of them left out.
SEPARATORS = "\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(
    map(chr, range(0x2000, 0x200B))
)
_SEPARATOR = re.compile(f"[{SEPARATORS}]")
_AS_SPACE = str.maketrans(dict.fromkeys(SEPARATORS, " "))
# Unicode's other default-ignorable code points, which show nothing yet cleaning keeps, since text means
# something by them: the variation selectors (❤ and the emoji ❤\ufe0f), the Mongolian free variation selectors,
# the Khmer inherent vowels, and those reserved unassigned. Inside a secret one splits it for a detector, and the
# text still shows and copies as the secret.
_IGNORABLE = "[\u17b4\u17b5\u180b-\u180d\u180f\u2065\ufe00-\ufe0f\ufff0-\ufff8\U000e0000-\U000e0fff]"
# What the detectors read through as if it were not there: the invisible characters (``fence.INVISIBLE``) and
# the control characters that are not white space (note cleaning removes both), and ``_IGNORABLE``.
_ABSENT = re.compile(f"[\\x00-\\x08\\x0e-\\x1b\\x7f-\\x84\\x86-\\x9f]|{INVISIBLE.pattern}|{_IGNORABLE}")
_ABSENT_OR_SEPARATOR = re.compile(f"{_ABSENT.pattern}|{_SEPARATOR.pattern}")


def marker(kind: str) -> str:
    return f"[redacted: {kind}]"


EXTRA_KINDS = frozenset(detector.kind for detector in DETECTORS if detector.extra)


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    kinds: list[str]  # each kind found, once, in the table's order (``KINDS``, then registered kinds)

    def warnings(self) -> list[str]:
        return [f"redacted: {kind}" for kind in self.kinds]


@dataclass(frozen=True, slots=True)
class _View:
    """The text as the detectors read it, and where each of its characters is in the text."""

    text: str
    removed: list[int]  # for each character left out, the view index of the next character kept

    def original(self, index: int) -> int:
        return index + bisect_right(self.removed, index)


def _view(text: str, *, joined: bool) -> _View:
    """The detectors' view: what they read through left out, and the separators spaces (or, ``joined``, left out)."""
    spaced = text if joined else text.translate(_AS_SPACE)  # same length: every index stays where it was
    removed: list[int] = []
    pieces: list[str] = []
    kept = 0  # characters of the view so far
    last = 0
    for found in (_ABSENT_OR_SEPARATOR if joined else _ABSENT).finditer(spaced):  # each match is one character
        pieces.append(spaced[last : found.start()])
        kept += found.start() - last
        removed.append(kept)
        last = found.end()
    if not removed:
        return _View(spaced, [])
    pieces.append(spaced[last:])
    return _View("".join(pieces), removed)


def _found(text: str, extra: frozenset[str], *, joined: bool) -> list[Span]:
    """The spans the detectors find in one view of ``text``, as offsets of ``text``."""
    view = _view(text, joined=joined)
    return [(view.original(start), view.original(end - 1) + 1, kind) for start, end, kind in find(view.text, extra)]


def _merged(spans: list[Span]) -> list[Span]:
    """Overlapping spans (of the two views) as one, with the kind of the one that starts first."""
    merged: list[Span] = []
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), merged[-1][2])
        else:
            merged.append((start, end, kind))
    return merged


def redact(text: str, *, extra: frozenset[str] = frozenset()) -> Redacted:
    """``text`` with every secret replaced by its marker, and the kinds found. Counted in ``SecretsRedacted``.

    Idempotent: a marker is never taken for a secret, so redacting what a model returns again is safe.
    """
    if len(text) > MAX_CHARS:
        raise InvalidInput(
            f"the text is {len(text):,} characters; at most {MAX_CHARS:,} can be checked for secrets",
            details=[{"loc": ["text"], "msg": "too long to check for secrets", "type": "too_long"}],
        )
    spans = _found(text, extra, joined=False)
    if _SEPARATOR.search(text) is not None:
        spans = _merged(spans + _found(text, extra, joined=True))
    if not spans:
        return Redacted(text, [])
    pieces: list[str] = []
    found: list[str] = []
    last = 0
    for start, end, kind in spans:
        pieces.append(text[last:start])
        pieces.append(marker(kind))
        last = end
        if kind not in found:
            found.append(kind)
    pieces.append(text[last:])
    metrics.add_metric(name="SecretsRedacted", unit="Count", value=len(spans))
    found.sort(key=lambda kind: KINDS.index(kind) if kind in KINDS else len(KINDS))
    return Redacted("".join(pieces), found)
