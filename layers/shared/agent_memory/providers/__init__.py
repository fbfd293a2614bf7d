"""Providers: the models that cannot run in-process, behind one port each: chat (``chat``), embeddings
(``embedding``, with the in-process MiniLM in ``minilm``), and the bounded clients they share (``clients``)."""
