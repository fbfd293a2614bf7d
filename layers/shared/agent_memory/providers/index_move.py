"""Moving the notes alias to the version this code writes (``notes-v<N>``) after a mapping change.

``make reindex MOVE_ALIAS=1`` (``python -m local.reindex --move-alias``). A deployment whose alias still
points at an older version (``notes-v1``: its ``text`` analysed by the standard analyzer) keeps working,
with the old BM25, until this runs:

1. the current version is created with the current mapping, if missing;
2. every document of the old index is copied into it (``search_after`` pages in ``(scope, note_id)``
   order, one ``_bulk`` each, routed by scope as every write is), so that its text is analysed anew and
   its vector kept: no note is embedded again;
3. the alias is moved in one ``_aliases`` request (remove from the old, add to the new): readers and the
   stream indexer switch at once, never seeing an alias without an index;
4. a second pass copies the documents the indexer wrote into the old index during step 2, and only those
   (``create``: a document the new index already holds, maybe newer, is never overwritten).

What a write during step 2 changed in place (a consolidated flag) or removed stays as step 2 copied it:
recall reads every hit's note from the table anyway (the table is the source of truth), so such a
document costs nothing but a count; ``make reindex SCOPES=... CHECK=1`` shows it and a scope's reindex
repairs it. The old index is kept, for the operator to delete once content (``DELETE /notes-v1``).

Used with OpenSearch's own client (opensearch-py); ``_reindex`` is not used, so it runs on any node
(the local minimal distribution has no reindex module).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_memory.providers.notes_index import ALIAS, INDEX_VERSION, MAPPING, SETTINGS

PAGE = 500


class AliasMoveRefused(RuntimeError):
    """The alias is not in a state this command moves (it names several indices)."""


@dataclass(frozen=True, slots=True)
class AliasMoved:
    previous: str | None  # the index the alias named before (None: there was no alias)
    current: str
    copied: int  # documents copied by the first pass
    caught_up: int  # documents only the second pass found (written meanwhile)


def move_alias(client: Any, *, alias: str = ALIAS, version: int = INDEX_VERSION, page: int = PAGE) -> AliasMoved:
    """Fill ``<alias>-v<version>`` from the index the alias names, then move the alias to it (see the module)."""
    target = f"{alias}-v{version}"
    named = sorted(client.indices.get_alias(name=alias)) if client.indices.exists_alias(name=alias) else []
    if len(named) > 1:
        raise AliasMoveRefused(f"alias {alias} names {len(named)} indices ({', '.join(named)}): move it by hand")
    if not client.indices.exists(index=target):
        client.indices.create(index=target, body={"settings": SETTINGS, "mappings": MAPPING})
    if not named:
        client.indices.put_alias(index=target, name=alias)
        return AliasMoved(None, target, 0, 0)
    [previous] = named
    if previous == target:
        return AliasMoved(previous, target, 0, 0)
    copied = copy_documents(client, previous, target, overwrite=True, page=page)
    client.indices.update_aliases(
        body={"actions": [{"remove": {"index": previous, "alias": alias}}, {"add": {"index": target, "alias": alias}}]}
    )
    caught_up = copy_documents(client, previous, target, overwrite=False, page=page)
    return AliasMoved(previous, target, copied, caught_up)


def copy_documents(client: Any, source: str, target: str, *, overwrite: bool, page: int = PAGE) -> int:
    """Copy every document of ``source`` into ``target`` under the same id and routing; how many were written.

    ``overwrite=False`` writes only documents ``target`` lacks (``create``; its conflicts are expected)."""
    client.indices.refresh(index=source)
    body: dict[str, Any] = {"size": page, "query": {"match_all": {}}, "sort": [{"scope": "asc"}, {"note_id": "asc"}]}
    written = 0
    while True:
        hits = client.search(index=source, body=body)["hits"]["hits"]
        if not hits:
            break
        lines: list[dict[str, Any]] = []
        for hit in hits:
            target_of = {"_index": target, "_id": hit["_id"], "routing": hit["_source"]["scope"]}
            lines += [{"index" if overwrite else "create": target_of}, hit["_source"]]
        for item in client.bulk(body=lines)["items"]:
            [(kind, result)] = item.items()
            error = result.get("error")
            if error is None:
                written += 1
            elif not (kind == "create" and result.get("status") == 409):
                raise RuntimeError(
                    f"copying {result.get('_id')} into {target}: {error.get('type')}: {error.get('reason')}"
                )
        if len(hits) < page:
            break
        body["search_after"] = hits[-1]["sort"]
    client.indices.refresh(index=target)
    return written
