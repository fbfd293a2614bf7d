"""Secret redaction on every write path (docs/api.md §6 "Redaction"), before anything is stored or logged.

``DETECTORS`` is the table (``secret_detectors``): one row per shape of secret, each linear in its input. A
deployment extends it by adding rows (e.g. an internal token format) with ``register``; ``email`` and
``phone`` are off unless ``MEMORY_REDACT_EXTRA`` names them. Each secret found is replaced by
``[redacted: <kind>]``; the text around it is kept.

The detectors read a *view* of the text in which invisible format characters (zero-width, bidi controls,
the BOM: what note cleaning removes) are left out and every other space or line separator (U+00A0,
U+2028...) is a plain space, so that no invisible character can split a secret that a reader, a model or
cleaning would put back together. What a detector finds in the view is replaced in the text itself,
invisible characters inside the secret included.

Work is bounded: a text longer than ``MAX_CHARS`` is refused before any detector runs (the write paths cap
or refuse their inputs below it first), and every detector is linear (``secret_detectors``).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from agent_memory.basics.errors import InvalidInput
from agent_memory.basics.observability import metrics
from agent_memory.domain.fence import INVISIBLE
from agent_memory.domain.secret_detectors import DETECTORS, KINDS, Detector, find, luhn, register

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

# Every other space and line separator reads as a plain space: NBSP, the typographic spaces, U+2028...
_SPACES = str.maketrans(
    dict.fromkeys(
        "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\x85\x0b\x0c\x1c\x1d\x1e",
        " ",
    )
)


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


def _view(text: str) -> _View:
    if text.isascii():
        return _View(text, [])
    spaced = text.translate(_SPACES)
    if INVISIBLE.search(spaced) is None:
        return _View(spaced, [])
    removed: list[int] = []
    pieces: list[str] = []
    kept = 0  # characters of the view so far
    last = 0
    for found in INVISIBLE.finditer(spaced):
        pieces.append(spaced[last : found.start()])
        kept += found.start() - last
        removed.append(kept)
        last = found.end()
    pieces.append(spaced[last:])
    return _View("".join(pieces), removed)


def redact(text: str, *, extra: frozenset[str] = frozenset()) -> Redacted:
    """``text`` with every secret replaced by its marker, and the kinds found. Counted in ``SecretsRedacted``.

    Idempotent: a marker is never taken for a secret, so redacting what a model returns again is safe.
    """
    if len(text) > MAX_CHARS:
        raise InvalidInput(
            f"the text is {len(text):,} characters; at most {MAX_CHARS:,} can be checked for secrets",
            details=[{"loc": ["text"], "msg": "too long to check for secrets", "type": "too_long"}],
        )
    view = _view(text)
    spans = find(view.text, extra)
    if not spans:
        return Redacted(text, [])
    pieces: list[str] = []
    found: list[str] = []
    last = 0
    for start, end, kind in spans:
        begin, finish = view.original(start), view.original(end - 1) + 1
        pieces.append(text[last:begin])
        pieces.append(marker(kind))
        last = finish
        if kind not in found:
            found.append(kind)
    pieces.append(text[last:])
    metrics.add_metric(name="SecretsRedacted", unit="Count", value=len(spans))
    found.sort(key=lambda kind: KINDS.index(kind) if kind in KINDS else len(KINDS))
    return Redacted("".join(pieces), found)
