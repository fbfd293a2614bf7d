"""What one group's fold makes of the document (docs/consolidation.md "The edits protocol"): the chat model's
cited edits, applied by the service; one retry with the refusals listed; then a whole-document rewrite with its
guard. Without a model, the group's notes as dated bullets (``domain.edits.model_free``), one for each set of
near-identical notes (``search.near_duplicates``, the rule by which ``remember`` answers ``similar``): the
newest wording, citing them all.

Nothing here writes: the worker (``consolidation.worker``) saves what ``propose`` answers, through ``update_memory``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from agent_memory.basics.errors import ModelUnavailable
from agent_memory.basics.observability import logger, model_tokens
from agent_memory.domain import edits
from agent_memory.domain.document import Document
from agent_memory.domain.fold import DueNote, fold_view
from agent_memory.domain.prompts import (
    CONSOLIDATION_EDITS_SYSTEM,
    CONSOLIDATION_SYSTEM,
    consolidation_edits_prompt,
    consolidation_prompt,
)
from agent_memory.domain.text_pipeline import DOCUMENT, prepare
from agent_memory.providers.chat import Answer, ChatModel, Tool
from agent_memory.search.near_duplicates import near_identical, text_key
from agent_memory.search.vectors import QueryVector, decode

# The rewrite answers the whole document; edits answer what changes, so far fewer tokens.
REWRITE_MAX_TOKENS = 8192
EDITS_MAX_TOKENS = 4096
# A rewrite shorter than half the current document has dropped facts, not folded notes in.
MIN_KEPT_RATIO = 0.5
# The model's edits are asked for this many times (the second time with the refusals) before the rewrite.
EDIT_ATTEMPTS = 2

EDIT_TOOL = Tool(edits.EDIT_TOOL_NAME, edits.EDIT_TOOL_DESCRIPTION, edits.EDIT_SCHEMA)

Kind = Literal["edits", "rewrite", "model_free", "unchanged"]


class GroupFailed(Exception):
    """A group could not be folded; its notes stay unmarked. ``tokens``: what its model calls cost before."""

    tokens: tuple[int, int] = (0, 0)


@dataclass(frozen=True, slots=True)
class Proposal:
    """A fold's result: how it was made (``kind``), the new ``content`` (the current one when ``unchanged``: no
    version is saved), the ``edits`` as applied with their notes (None for a rewrite), and the tokens the
    model reported for all the fold's calls."""

    kind: Kind
    content: str
    edits: list[dict[str, Any]] | None
    input_tokens: int = 0
    output_tokens: int = 0


def propose(
    model: ChatModel | None, current: Document, notes: list[DueNote], *, vector_tag: int | None = None
) -> Proposal:
    """The group's fold into ``current``; raises GroupFailed when neither edits nor a rewrite can be had.
    ``vector_tag``: the model tag of the vectors the notes carry (None: the table holds none), for the fold
    without a model to compare them as ``remember`` does."""
    if model is None:
        folded = edits.model_free(current.content, bullets(notes, vector_tag))
        return Proposal("model_free", folded.content, folded.edits)
    spent = [Proposal("unchanged", current.content, None)]
    try:
        return _asked(model, current, notes, spent)
    except GroupFailed as failed:
        failed.tokens = (spent[0].input_tokens, spent[0].output_tokens)
        raise


def bullets(notes: list[DueNote], vector_tag: int | None) -> list[tuple[list[str], str, str]]:
    """One bullet for each set of near-identical notes (``notes`` oldest first): the newest note's day and
    wording, citing every note of the set, oldest first; the bullets in the order of their newest notes.

    A note joins the set of the newest note it is near-identical to, as ``remember``'s ``similar`` and
    recall's one-slot-per-fact compare them: the same terms, or contained terms and a cosine of at least 0.9
    between the vectors stored with the notes (``vector_tag``)."""
    keys = {note.id: text_key(note.text) for note in notes}
    stored = {note.id: decode(note.vector, tag=vector_tag) for note in notes if note.vector and vector_tag is not None}
    vectors = {ident: vector for ident, vector in stored.items() if vector is not None}

    def cosine(first: str, second: str) -> float | None:
        if first not in vectors or second not in vectors:
            return None
        return QueryVector(vectors[first][0].tolist()).cosine(vectors[second])

    sets: list[list[DueNote]] = []  # each newest first
    for note in reversed(notes):
        same = next((kept for kept in sets if near_identical(note.id, kept[0].id, keys, cosine)), None)
        if same is None:
            sets.append([note])
        else:
            same.append(note)
    return [([note.id for note in reversed(kept)], kept[0].day, kept[0].text) for kept in reversed(sets)]


def _asked(model: ChatModel, current: Document, notes: list[DueNote], spent: list[Proposal]) -> Proposal:
    """Edits (asked for on the document's view, ``domain.fold``), their retry, then the rewrite (on the
    whole document); ``spent[0]`` keeps the tokens reported so far."""
    view = fold_view(current.content, [note.text for note in notes])
    cited = [(note.id, note.day, note.text) for note in notes]
    refusals: list[str] | None = None
    for _ in range(EDIT_ATTEMPTS):
        prompt = consolidation_edits_prompt(view.text, cited, refusals, partial=view.partial)
        answer = _ask(model, CONSOLIDATION_EDITS_SYSTEM, prompt, EDITS_MAX_TOKENS, EDIT_TOOL)
        spent[0] = _spent(spent[0], answer)
        if answer.arguments is None:  # a model or server without tool calls: its text is the whole document
            if view.partial:  # ... of what it was shown, which is not the whole: the rewrite is shown it all
                break
            return replace(spent[0], kind="rewrite", content=_rewritten(answer.text, current))
        result = edits.apply(current.content, answer.arguments, [note.id for note in notes])
        if isinstance(result, edits.Edited):
            kind: Kind = "unchanged" if result.unchanged else "edits"
            return replace(spent[0], kind=kind, content=result.content, edits=result.edits)
        refusals = result.reasons
        logger.info("the chat model's edits were refused", extra={"refusals": refusals[:10]})
    return _rewrite(model, current, notes, spent)


def rewrite(model: ChatModel, current: Document, notes: list[DueNote]) -> Proposal:
    """The fallback alone: the whole document rewritten with the notes folded in, shown the whole document,
    with the rewrite's guards; GroupFailed when the model fails or a guard refuses its answer."""
    return _rewrite(model, current, notes, [Proposal("unchanged", current.content, None)])


def _rewrite(model: ChatModel, current: Document, notes: list[DueNote], spent: list[Proposal]) -> Proposal:
    prompt = consolidation_prompt(current.content, [(note.day, note.text) for note in notes])
    answer = _ask(model, CONSOLIDATION_SYSTEM, prompt, REWRITE_MAX_TOKENS, None)
    spent[0] = _spent(spent[0], answer)
    return replace(spent[0], kind="rewrite", content=_rewritten(answer.text, current))


def _ask(model: ChatModel, system: str, prompt: str, max_tokens: int, tool: Tool | None) -> Answer:
    try:
        answer = model.ask(system=system, prompt=prompt, max_tokens=max_tokens, tool=tool)
    except ModelUnavailable as error:
        raise GroupFailed(error.message) from None
    model_tokens("consolidation", answer.input_tokens, answer.output_tokens)
    return answer


def _spent(proposal: Proposal, answer: Answer) -> Proposal:
    return replace(
        proposal,
        input_tokens=proposal.input_tokens + answer.input_tokens,
        output_tokens=proposal.output_tokens + answer.output_tokens,
    )


def _rewritten(text: str, current: Document) -> str:
    """A whole document from the model, with the rewrite's guards."""
    content = text.strip()
    if not content:
        raise GroupFailed("the chat model answered with an empty document")
    if len(content) < MIN_KEPT_RATIO * current.chars:
        raise GroupFailed("the chat model's document dropped more than half of the current one")
    return content


def redacted(applied: list[dict[str, Any]] | None, extra: frozenset[str]) -> list[dict[str, Any]] | None:
    """The edits as the version records them: their texts through the pipeline, like the document they made."""
    if applied is None:
        return None
    return [
        {
            **edit,
            **{
                key: prepare(edit[key], "consolidation", DOCUMENT, extra=extra).text
                for key in edits.RECORDED_TEXTS
                if isinstance(edit.get(key), str)
            },
        }
        for edit in applied
    ]
