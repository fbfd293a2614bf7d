"""Consolidation by cited edits (docs/consolidation.md "The edits protocol"): the model proposes edits to the
current document, each citing the notes of the group it comes from, and the service applies them.

An edit is one of
- ``add``: ``text`` (one or more lines) after the one line of the document equal to ``after``, or at the end
  when ``after`` is null;
- ``replace``: the one line equal to ``line`` becomes ``text``;
- ``delete``: the one line equal to ``line`` goes.

Every edit of a list is checked against the document as it was read, before any is applied; one refusal refuses
the whole list, which then changes nothing. Applying an accepted list keeps every line that no edit names byte
for byte: the service writes the result, never the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from agent_memory.domain.fence import unfence

# The tool the model is asked to call, and its parameters' JSON Schema (what ``EditList`` validates).
EDIT_TOOL_NAME = "edit_document"
EDIT_TOOL_DESCRIPTION = (
    "Apply edits to the memory document. Each edit quotes an exact line of the current document and cites the "
    "ids of the notes it comes from. An empty list means nothing to change."
)
_NOTES_SCHEMA = {"type": "array", "items": {"type": "string"}, "minItems": 1}
EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "op": {"type": "string", "enum": ["add", "replace", "delete"]},
                    "after": {
                        "type": ["string", "null"],
                        "description": "add: the exact line to add after; null adds at the end",
                    },
                    "line": {"type": "string", "description": "replace, delete: the exact line of the document"},
                    "text": {"type": "string", "description": "add, replace: the new line or lines"},
                    "notes": {**_NOTES_SCHEMA, "description": "the ids of the notes this edit comes from"},
                },
                "required": ["op", "notes"],
            },
        }
    },
    "required": ["edits"],
}

# More edits than this is not a fold of a group's notes; the list is refused.
MAX_EDITS = 200


class _Edit(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    notes: list[str] = Field(default_factory=list)


class Add(_Edit):
    op: Literal["add"]
    after: str | None = None
    text: str


class Replace(_Edit):
    op: Literal["replace"]
    line: str
    text: str


class Delete(_Edit):
    op: Literal["delete"]
    line: str


Edit = Annotated[Add | Replace | Delete, Field(discriminator="op")]


class EditList(BaseModel):
    model_config = ConfigDict(extra="ignore")

    edits: list[Edit] = Field(max_length=MAX_EDITS)


_EDIT_LIST = TypeAdapter(EditList)


@dataclass(frozen=True, slots=True)
class Edited:
    """An accepted edit list: the new ``content`` and the ``edits`` as applied (each a JSON object, with its
    ``notes``), as the version records them."""

    content: str
    edits: list[dict[str, Any]]

    @property
    def unchanged(self) -> bool:
        return not self.edits


@dataclass(frozen=True, slots=True)
class Refused:
    """An edit list refused as a whole: why, one line per refusal, as the model is told on its retry."""

    reasons: list[str]


def parse(arguments: object) -> EditList | Refused:
    """The model's tool-call arguments (a JSON object, or its text) as an edit list, or why not."""
    try:
        if isinstance(arguments, str | bytes):
            return _EDIT_LIST.validate_json(arguments)
        return _EDIT_LIST.validate_python(arguments)
    except ValidationError as error:
        reasons = []
        for problem in error.errors(include_url=False)[:10]:
            where = ".".join(str(part) for part in problem["loc"]) or "the answer"
            reasons.append(f"{where}: {problem['msg']}")
        return Refused(["the answer is not an edit list: " + "; ".join(reasons)])


def apply(document: str, answer: object, note_ids: list[str]) -> Edited | Refused:
    """Check the model's answer against ``document`` and the group's ``note_ids``; apply it if every edit is
    accepted. A refused answer changes nothing."""
    placed = _placements(document, answer, set(note_ids))
    if isinstance(placed, Refused):
        return placed
    accepted, lines = placed
    return Edited(lines.content, [_recorded(edit) for edit in accepted])


@dataclass(frozen=True, slots=True)
class Placement:
    """Where each line of an edited document comes from: ``lines`` holds each new line with the index of the
    line of the old document it keeps, or the notes cited by the edit that wrote it; ``retired`` maps each old
    line a ``replace`` or ``delete`` named to the notes that edit cites."""

    lines: list[tuple[str, int | tuple[str, ...]]]
    retired: dict[int, tuple[str, ...]]

    @property
    def content(self) -> str:
        return "\n".join(text for text, _ in self.lines)


def placement(document: str, applied: list[dict[str, Any]]) -> Placement | None:
    """Where each line comes from once ``applied`` (an accepted list, as ``Edited.edits`` records it) is applied
    to ``document``; None when the list does not apply to it (then no line's origin is known)."""
    cited = {note for edit in applied for note in edit.get("notes") or []}
    placed = _placements(document, {"edits": applied}, cited)
    return None if isinstance(placed, Refused) else placed[1]


def _placements(
    document: str, answer: object, group: set[str]
) -> tuple[list[Add | Replace | Delete], Placement] | Refused:
    """The accepted edits (each quoting the document's own line) and where they put each line; or why not."""
    parsed = answer if isinstance(answer, EditList) else parse(answer)
    if isinstance(parsed, Refused):
        return parsed
    lines = document.split("\n") if document else []
    reasons: list[str] = []
    replaced: dict[int, Replace | Delete] = {}
    after: dict[int | None, list[Add]] = {}
    accepted: list[Add | Replace | Delete] = []
    for number, edit in enumerate(parsed.edits, start=1):
        problem = _cited(edit, group) or _has_text(edit)
        placed = _placed(edit, lines, replaced, after) if problem is None else None
        if isinstance(placed, str) or problem is not None:
            reasons.append(f"edit {number} ({edit.op}): {problem or placed}")
        elif placed is not None:
            accepted.append(placed)
    if reasons:
        return Refused(reasons)
    retired = {index: tuple(edit.notes) for index, edit in replaced.items()}
    return accepted, Placement(_applied(lines, replaced, after), retired)


def _cited(edit: Add | Replace | Delete, group: set[str]) -> str | None:
    if not edit.notes:
        return "it names no note; every edit cites the ids of the notes it comes from"
    outside = [note for note in edit.notes if note not in group]
    if outside:
        return f"it names {', '.join(repr(note) for note in outside[:3])}, not a note of this group"
    return None


def _placed(
    edit: Add | Replace | Delete,
    lines: list[str],
    replaced: dict[int, Replace | Delete],
    after: dict[int | None, list[Add]],
) -> Add | Replace | Delete | str:
    """Find the edit's line and record where it applies: the edit, quoting the document's own line; or why not."""
    if isinstance(edit, Add) and edit.after is None:
        after.setdefault(None, []).append(edit)
        return edit
    quoted = edit.after if isinstance(edit, Add) else edit.line
    where, problem = _one_line(lines, quoted or "")
    if where is None:
        return problem or "no line"
    if isinstance(edit, Add):
        edit = edit.model_copy(update={"after": lines[where]})
        after.setdefault(where, []).append(edit)
        return edit
    if where in replaced:
        return f"line {where + 1} is already changed by an earlier edit of this list"
    edit = edit.model_copy(update={"line": lines[where]})
    replaced[where] = edit
    return edit


def _has_text(edit: Add | Replace | Delete) -> str | None:
    if isinstance(edit, Add | Replace) and not _text_lines(edit.text):
        return "its text is empty" + ("; to remove a line, delete it" if isinstance(edit, Replace) else "")
    return None


def _one_line(lines: list[str], anchor: str) -> tuple[int | None, str | None]:
    """The index of the one line equal to ``anchor``; a line quoted as the model was shown it (fenced: ``&lt;``
    for ``<``) is read back as the document's own."""
    found = [index for index, line in enumerate(lines) if line == anchor]
    if not found and unfence(anchor) != anchor:
        found = [index for index, line in enumerate(lines) if line == unfence(anchor)]
    if len(found) == 1:
        return found[0], None
    quoted = repr(anchor if len(anchor) <= 80 else anchor[:77] + "...")
    if not found:
        return None, f"{quoted} is not a line of the document; quote one line exactly"
    return None, f"{quoted} matches {len(found)} lines of the document; quote a line that occurs once"


def _text_lines(text: str) -> list[str]:
    """An edit's text as lines: none when it is blank, else without its final line breaks."""
    return text.rstrip("\r\n").split("\n") if text.strip() else []


def _applied(
    lines: list[str], replaced: dict[int, Replace | Delete], after: dict[int | None, list[Add]]
) -> list[tuple[str, int | tuple[str, ...]]]:
    """The edited document's lines, each with its origin (``Placement.lines``)."""
    out: list[tuple[str, int | tuple[str, ...]]] = []
    for index, line in enumerate(lines):
        change = replaced.get(index)
        if change is None:
            out.append((line, index))
        elif isinstance(change, Replace):
            out.extend((text, tuple(change.notes)) for text in _text_lines(change.text))
        for add in after.get(index, []):
            out.extend((text, tuple(add.notes)) for text in _text_lines(add.text))
    at_end = [(line, tuple(add.notes)) for add in after.get(None, []) for line in _text_lines(add.text)]
    if at_end and out and out[-1][0] == "" and lines and lines[-1] == "":
        out[-1:] = [*at_end, out[-1]]  # before the document's final line break, which stays final
    else:
        out.extend(at_end)
    return out


RECORDED_TEXTS = ("after", "line", "text")  # the keys of a recorded edit that hold the document's text


def _recorded(edit: Add | Replace | Delete) -> dict[str, Any]:
    """An edit as the version records it and the history answers it (its ``RECORDED_TEXTS`` go through the text
    pipeline before they are stored)."""
    if isinstance(edit, Add):
        return {"op": "add", "after": edit.after, "text": "\n".join(_text_lines(edit.text)), "notes": list(edit.notes)}
    if isinstance(edit, Replace):
        return {
            "op": "replace",
            "line": edit.line,
            "text": "\n".join(_text_lines(edit.text)),
            "notes": list(edit.notes),
        }
    return {"op": "delete", "line": edit.line, "notes": list(edit.notes)}


# --- The fold without a model ----------------------------------------------------------------------------

MODEL_FREE_HEADING = "## Notes"


def model_free(document: str, bullets: list[tuple[list[str], str, str]]) -> Edited:
    """The group's bullets (``(note ids, day, text)``, oldest first; one for each group of near-identical notes,
    ``consolidation.folding``) appended as ``- [YYYY-MM-DD] text`` under the document's ``## Notes`` heading
    (made at the end when the document has none), each an ``add`` citing its notes."""
    lines = document.split("\n") if document else []
    anchor = _section_end(lines)
    edits: list[dict[str, Any]] = []
    for number, (notes, day, text) in enumerate(bullets):
        bullet = f"- [{day}] " + " ".join(text.split())  # one line per note, whatever its line breaks
        if number == 0 and anchor is None:
            blank = "\n" if lines and lines[-1].strip() else ""
            bullet = f"{blank}{MODEL_FREE_HEADING}\n{bullet}"
        edits.append({"op": "add", "after": anchor, "text": bullet, "notes": list(notes)})
    result = apply(document, {"edits": edits}, [note for notes, _, _ in bullets for note in notes])
    if not isinstance(result, Edited):  # pragma: no cover - the anchor occurs once and every edit cites its notes
        raise AssertionError(result.reasons)
    return result


def _section_end(lines: list[str]) -> str | None:
    """The last non-blank line of the document's ``## Notes`` section, when it has exactly one such heading and
    that line occurs once in the document; else None (the bullets go at the end, under a new heading)."""
    headings = [index for index, line in enumerate(lines) if line.strip() == MODEL_FREE_HEADING]
    if len(headings) != 1:
        return None
    end = headings[0]
    for index in range(headings[0] + 1, len(lines)):
        if lines[index].startswith("#"):
            break
        if lines[index].strip():
            end = index
    last = lines[end]
    if lines.count(last) != 1:
        return None
    return last
