"""Durable memory for chat agents: the domain and its edges, shared by every Lambda function.

A folder per layer, inside out; a module imports its own folder and those below it, never one above
(``make lint`` checks it from the folders):

- ``basics/``: settings, the clock, deadlines, typed errors (mapped to HTTP once, in ``edges.http``), logs
  and metrics.
- ``domain/``: the records and rules (scope, notes, document, fold, the per-turn block, the fence, the text
  pipeline every stored text goes through, redaction, prompts), the commands the use cases take and the
  shapes they answer. No I/O.
- ``storage/`` (DynamoDB: keys, the one client and its error mapping, the stores, the ``Idempotency-Key``
  records), ``search/`` (the notes index, BM25, fusion, vectors) and ``providers/`` (the chat, embedding and
  reranking models).
- the use cases, by capability: ``memory/`` (remember, update_memory, the context, compression, the flush,
  the dashboard's document and notes), ``recall/`` (recall, the indexer, reindex, the index check),
  ``consolidation/`` (the planner and fold, the queue, the worker), ``people/`` (export, erase, usage, what
  each turn was shown).
- ``bootstrap``: the composition root, which builds the object graph from the settings.
- ``edges/``: everything that crosses the boundary: HTTP (``routes/`` holds every route), request models
  and parsing, the dashboard's caller, the Lambda events' adapters.
"""
