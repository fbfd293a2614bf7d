"""Durable memory for chat agents: the domain and its edges, shared by every Lambda function.

Layout (the domain in the middle, the edges around it):
- ``settings``, ``clock``, ``observability``: configuration, time and telemetry, read once.
- ``errors``: typed domain exceptions, mapped to HTTP in one place (``http``).
- ``scope``, ``api``: the conversation context and how it binds a scope; strict request models.
- ``notes``, ``document``, ``context_block``: the two memory layers and the per-turn block.
- ``storage``: DynamoDB items and keys; ``providers``: the chat and embedding models.
- ``service``: the operations the routes call.
"""
