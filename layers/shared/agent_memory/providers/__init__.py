"""Providers: the models that cannot run in-process, behind one port each: chat (``chat``), embeddings
(``embedding``, with the in-process MiniLM in ``minilm``), reranking (``rerank``), and the bounded clients they
share (``clients``); and the notes index, OpenSearch's adapter (``notes_index``, its search bodies in
``index_queries``, its alias move in ``index_move``)."""
