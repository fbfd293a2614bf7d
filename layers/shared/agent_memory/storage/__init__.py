"""DynamoDB storage: key layout (``keys``), the client (``client``), notes and documents. See docs/storage.md."""
