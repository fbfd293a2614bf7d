"""The extraction's model-free reader (``memory.first_person``) reads a long conversation in linear time: a timed
run, in this tier because a machine under load can stretch it (`make unit` keeps no timed test)."""

from __future__ import annotations

import itertools
import time

from agent_memory.domain.extraction import MAX_FACTS
from agent_memory.memory.first_person import first_person_facts


def test_a_long_stretch_of_distinct_statements_is_read_in_linear_time():
    """20,000 distinct first-person sentences (about 1 MB, well within a request) are read well within the
    extraction's 10 seconds: each sentence's words are looked up among those seen, never compared with each."""
    numbered = (f"I prefer tea number w{n}x and also q{n}z." for n in itertools.count())
    messages = [("user", " ".join(next(numbered) for _ in range(10))) for _ in range(2000)]

    started = time.monotonic()
    facts = first_person_facts(messages)
    elapsed = time.monotonic() - started

    assert len(facts) == MAX_FACTS
    assert elapsed < 8, f"{elapsed:.1f} s"  # 27 s when each sentence was compared with every one before it
