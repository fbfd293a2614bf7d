"""Notes written in bulk as the store writes them, with their vectors: the store's own item builders
(``note_items.note_item`` with its ``vec``, and ``note_items.vector_item``, what the vector index reads), so a test
of the table's vector index can hold thousands of notes without thousands of ``remember`` calls."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from functools import partial
from typing import Any

from agent_memory.domain.notes import Note, Origin
from agent_memory.domain.scope import Scope
from agent_memory.search.vectors import encode, index_components, model_tag
from agent_memory.storage.note_items import note_item, vector_item
from tests.support.fake_embeddings import fake_vector
from tests.support.scopes import stored

MODEL = "openai:fake-embeddings"  # the ``embedder`` fixture's model


def note_items(
    scope: Scope, texts: Sequence[str], *, newest: date, dimensions: int = 1024, per_day: int = 20
) -> list[dict[str, Any]]:
    """Each text's note item and its indexed vector's, ``texts[0]`` the newest (on ``newest``), ``per_day`` a day
    going back, the vectors the fake model's at ``dimensions``. A text repeated reuses its vector (cheap fillers)."""
    tag = model_tag(MODEL, dimensions)
    indexed = partial(index_components, tag=tag, dimensions=dimensions)
    made: dict[str, tuple[str, bytes, list[int] | None]] = {}
    items = []
    for place, text in enumerate(texts):
        if text not in made:  # as remember stores it: through the text pipeline
            blob = encode(fake_vector(text, dimensions), tag=tag)
            made[text] = stored(text), blob, indexed(blob)
        kept, blob, numbers = made[text]
        day = (newest - timedelta(days=place // per_day)).isoformat()
        position = per_day - place % per_day
        note = Note(day, position, kept, f"{day}T00:00:{position:02d}.000Z", "remember", Origin("u-1", f"t-{place}"))
        items.append(note_item(scope, note) | {"vec": {"B": blob}})
        if numbers is not None:
            items.append(vector_item(scope, day, position, numbers))
    return items


def write_all(client: Any, table: str, items: list[dict[str, Any]]) -> None:
    """The items put into the tests' in-process moto table (``client``'s), each stored as a BatchWriteItem's put
    stores it, without the requests: 20,000 items, 800 BatchWriteItem requests through botocore and moto's request
    handling, were most of the 10,000-note test's minute."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID][client.meta.region_name]
    for item in items:
        backend.put_item(table, item)
