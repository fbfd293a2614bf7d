"""Search over notes: the keyword ranking that needs no server (``bm25``) and, when configured, the index."""
