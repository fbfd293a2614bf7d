"""Search over notes, pure (no I/O): the keyword ranking that needs no server (``bm25``, ``analysis``), fusion,
diversity, query expansion and dates, near duplicates, and the stored vectors (``vectors``). The notes index in
OpenSearch that uses them is ``providers.notes_index``."""
