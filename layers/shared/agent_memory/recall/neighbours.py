"""Context around a hit: the notes written just before and after recall's strong hits, in the same conversation.

A note is written by one conversation (``origin.thread_id``) at a place in its scope's day (``position``,
in write order across all the scope's conversations). What a conversation said just before or after a
note that answers a question often completes it ("Adopted a greyhound called Pepper." / "Pepper needs a
vet check for a sore hip.") without holding the question's words. With ``MEMORY_RECALL_NEIGHBOURS`` = n,
the n notes of the same thread nearest the best candidate (``STRONG_HITS``), on each side and on the
hit's day, join the candidates with ``NEIGHBOUR_SHARE`` of the hit's score (a note already there keeps
the better of its two scores), before near-duplicates and diversity pick the answer: the answer keeps its
shape (k notes with scores), and in ``keyword`` mode a neighbour still needs a word of the query.

Where they come from: the table's path already holds them (the rows it ranks carry their thread: no
added read). The index's path reads them from the table: one Query per strong hit (one) on the caller's
partition (``NoteStore.around``: the positions within ``SPAN`` of the hit, on its day), and a failed read
drops the neighbours, never the answer. A row of another scope is set aside before it can count, and a
note of another thread is never a neighbour. docs/recall-quality.md has what it costs and what it did
on the dev set.

**Session window** (``windowed``, the table's path): every candidate gains ``WINDOW_SHARE`` of the best
score among the other candidates of its conversation written within ``WINDOW_SPAN`` places of it on its
day, counting only those whose stored vector is near its own (cosine at least ``WINDOW_SIMILARITY``).
A conversation's evidence comes in stretches: the turns around a strong hit that talk about the same
thing ("We're doing the shoot in Miami" after "I started shooting a video for my new album") are worth
more than a lone turn that shares a word with the question. The cosine keeps the lift within a topic:
two notes a conversation wrote one after the other about different things lend each other nothing.
Candidates only: no note joins, the order among them moves.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from agent_memory.storage.note_items import NoteText

# The candidates whose neighbours are looked for: the best one only. On the dev set, the first three's
# neighbours cost more (recall@10 0.840 against 0.850 with facts told in one conversation, 0.811 against
# 0.826 without) and three times the reads: below the first, a hit is as often a word in common.
STRONG_HITS = 1
# A neighbour's score, as a share of its hit's: 0.3 did as well as 0.5 and 0.7 where neighbours help and
# least harm where they do not (docs/recall-quality.md).
NEIGHBOUR_SHARE = 0.3
# How far from a hit (positions in its day) the index's path reads: the scope's other conversations of
# the day write between a conversation's notes too.
SPAN = 6

Place = TypeVar("Place", bound=Hashable)


def neighboured(
    ranked: Sequence[tuple[Place, float]], notes: Iterable[tuple[Place, NoteText]], *, count: int
) -> list[tuple[Place, float]]:
    """``ranked`` with the ``count`` same-thread notes on each side of each strong hit added or raised (see
    the module docstring), best first, ties in the order given. ``notes``: the notes known, by place, with
    their ``thread_id`` (the hits among them; a hit without a known thread has no neighbours)."""
    known = dict(notes)
    hits = [(place, score, known[place]) for place, score in ranked[:STRONG_HITS] if place in known]
    threads = {(hit.day, hit.thread_id) for _, _, hit in hits if hit.thread_id}
    written: dict[tuple[str, str | None], list[tuple[int, Place]]] = defaultdict(list)
    for place, note in known.items():
        if (note.day, note.thread_id) in threads:
            written[note.day, note.thread_id].append((note.position, place))
    scores = dict(ranked)
    for _, score, hit in hits:
        if not hit.thread_id:
            continue
        conversation = sorted(written[hit.day, hit.thread_id], key=_position)
        at = bisect.bisect_left([position for position, _ in conversation], hit.position)
        for _, place in conversation[max(0, at - count) : at] + conversation[at + 1 : at + 1 + count]:
            scores[place] = max(scores.get(place, 0.0), NEIGHBOUR_SHARE * score)
    return sorted(scores.items(), key=lambda pair: -pair[1])


def _position(entry: tuple[int, object]) -> int:
    return entry[0]


# The session window (``windowed``). On LoCoMo's two development conversations 3 places, 0.2 and a cosine
# of 0.5 lifted recall@10 0.714 -> 0.742 and @5 0.598 -> 0.646, the dev set unchanged at 10; without the
# cosine condition the dev set lost 0.013 at 10 (docs/recall-quality.md).
WINDOW_SPAN = 3
WINDOW_SHARE = 0.2
WINDOW_SIMILARITY = 0.5


def windowed(
    ranked: Sequence[tuple[Place, float]],
    notes: Mapping[Place, NoteText],
    similarity: Callable[[Place, Place], float | None],
    *,
    share: float = WINDOW_SHARE,
) -> list[tuple[Place, float]]:
    """``ranked`` with each candidate's score raised by ``share`` of the best score among the other candidates
    of its session window (the module docstring), best first, ties in the order given. ``notes``: the
    candidates' notes by place (one without a known thread has no window); ``similarity``: the cosine of two
    places' stored vectors, or None when either has none (then they lend nothing)."""
    if not share:
        return list(ranked)
    scores = dict(ranked)
    placed: dict[tuple[str, str | None, int], Place] = {
        (note.day, note.thread_id, note.position): place
        for place in scores
        if (note := notes.get(place)) is not None and note.thread_id
    }

    def around(place: Place) -> list[Place]:
        note = notes.get(place)
        if note is None or not note.thread_id:
            return []
        at = [(note.day, note.thread_id, note.position + offset) for offset in range(-WINDOW_SPAN, WINDOW_SPAN + 1)]
        return [other for key in at if (other := placed.get(key)) is not None and other != place]

    def near(place: Place, other: Place) -> bool:
        return (similarity(place, other) or 0.0) >= WINDOW_SIMILARITY

    lifted = []
    for place, score in ranked:
        best = next(  # the best-scored first: the cosine is computed until one is near
            (scores[o] for o in sorted(around(place), key=scores.__getitem__, reverse=True) if near(place, o)), 0.0
        )
        lifted.append((place, score + share * best))
    return sorted(lifted, key=lambda pair: -pair[1])
