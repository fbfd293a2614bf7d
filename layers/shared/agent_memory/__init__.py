"""Durable memory for chat agents: the domain and its edges, shared by every Lambda function.

Layout, from the outside in (the edges call the use cases; no use case imports an edge: ``make lint``):
- ``edges/``: every shape that crosses the boundary and the code that reads or writes it: request models
  (``requests``), the JSON parsing rules (``parsing``), the resolver and the one error mapping (``http``),
  the dashboard's caller (``auth``), how a route declares its answers (``responses``), the tool catalog
  and call (``tool_catalog``, ``tool_call``), the routers (``routes/``) the API functions include, and the
  Lambda events' adapters (``events``), which hand the use cases the typed commands of ``commands``.
- the use cases, which the edges call: ``service`` (remember, update_memory, the per-turn context),
  ``recall``, ``management`` and ``people`` (the dashboard's operations), ``flush``, ``consolidation``
  (and ``consolidation_queue``), ``indexer`` and ``reindex``, ``compression``, ``injections``; ``prompts``
  (what they ask a chat model).
- ``shapes``: the answers' shapes, built by the use cases and described in the OpenAPI document.
- the domain's rules and records: ``scope``, ``notes``, ``document``, ``context_block``, ``redaction``,
  ``fence``, ``idempotency``.
- below everything: ``storage/`` (DynamoDB items, keys and stores), ``search/`` (the notes index, BM25,
  fusion, vectors), ``providers/`` (the chat, embedding and reranking models), ``index_check`` (the
  index's vector size against the setting, at start), and the basics: ``settings``, ``clock``, ``deadline``,
  ``aside`` (a read started beside another), ``errors`` (typed refusals, mapped to HTTP once, in
  ``edges.http``), ``observability``.
- ``runtime``: the wiring, building each service on first use from the settings.
"""
