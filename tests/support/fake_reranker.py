"""A fake reranking model: no reranker runs on this machine, so tests give recall this one through the real port.

Its relevance is what the test says it is: ``relevance`` maps a text to its score (texts it does not
name score 0), so a test can make the reranker disagree with BM25 and the fusion on purpose. It can
also be slow (``delay_s``), fail (``failure``), or answer something that is not a ranking (``answer``).
It records every call, so a test can check that no call was made.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class FakeReranker:
    relevance: dict[str, float] = field(default_factory=dict)
    delay_s: float = 0.0
    failure: Exception | None = None
    answer: object = None  # when set, answered as it is, whatever the texts
    calls: list[tuple[str, list[str]]] = field(default_factory=list)
    finished: int = 0  # calls that got past their delay (a caller that stopped waiting sees fewer than calls)

    def rerank(self, query: str, texts: list[str]) -> list[tuple[int, float]]:
        self.calls.append((query, list(texts)))
        if self.delay_s:
            time.sleep(self.delay_s)
        self.finished += 1
        if self.failure is not None:
            raise self.failure
        if self.answer is not None:
            return self.answer  # type: ignore[return-value]  # malformed on purpose
        scored = [(place, self.relevance.get(text, 0.0)) for place, text in enumerate(texts)]
        return sorted(scored, key=lambda pair: -pair[1])
