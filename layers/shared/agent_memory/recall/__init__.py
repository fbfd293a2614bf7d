"""Recall: the search over a scope's notes, and the notes index's upkeep (the stream indexer, reindex, the
index check at start)."""
