"""The nightly consolidation: the planner and the fold (``consolidator``), the queue and its worker."""
