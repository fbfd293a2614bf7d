"""The service's edges: every shape that crosses its boundary (HTTP requests and answers, tokens, the tool
catalog, Lambda events) and the helpers that parse and write them; use cases never import from here."""
