"""How the API reads its requests: ``reading`` (the one request path: the body, the parameters, the headers,
the one 422) and ``declared`` (what each route declares it reads), and the request models by who sends them:
``chat`` (the chat backend's tools, context, extraction and flush), ``dashboard`` (the dashboard's writes),
``imports`` (the backend's import)."""
