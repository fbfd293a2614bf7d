"""HTTP routers that the API functions include: each route parses, calls one use case, serialises its answer."""
