"""Claude's memory tool (``memory_20250818``) backed by the service, for one conversation.

::

    from agent_memory_client.claude_memory import ClaudeMemoryTool   # pip install agent-memory-client[anthropic]

    memory_tool = ClaudeMemoryTool(memory, ConversationContext(user_id="u-1", thread_id="t-9"))
    runner = anthropic.Anthropic().beta.messages.tool_runner(model=..., max_tokens=..., tools=[memory_tool],
                                                              messages=[...])

The model sees a ``/memories`` directory; what it holds is the scope the conversation decides (a private
thread: the user's personal memory; a shared one: the workspace's), never one the model names:

- ``/memories/MEMORY.md``: the curated document. ``view`` (with line numbers, ``view_range``), ``str_replace``,
  ``insert`` and ``create`` (the whole text) each save a new version with the version the tool last read: a
  document changed meanwhile by someone else is not overwritten; the model is told to view it again. Only a
  ``view`` of ``MEMORY.md`` itself reads it: ``create`` over a document the model has not viewed is refused.
- ``/memories/notes/YYYY-MM-DD.md``: the notes the turn's context holds (today's and yesterday's, UTC), one
  ``- text`` line each, oldest first; read-only. Writing into ``notes/`` (``insert`` into a day file, or
  ``create`` of a new file there) is a ``remember`` of each non-blank line that is not a heading: the notes are
  today's, whichever file was named, and append-only.
- Anything else is refused with a message and writes nothing: another path, ``delete``, ``rename``, and a path
  that leaves ``/memories`` once normalised or that holds an encoded separator, a backslash or a control
  character. Sizes are the service's: a note over 2,000 characters is cut (the model is told), a document
  over 25,000 characters is compressed or refused.

Stored text is shown fenced as ``system_prompt`` shows it (:mod:`agent_memory_client.fence`): a note or a
line of the document cannot close the tool result or open a tag (``<`` is shown ``&lt;``). The model's edits are
read in the text it was shown: ``str_replace`` matches ``old_str`` there, and what it writes (``new_str``,
``insert_text``, ``file_text``) is stored with ``&lt;`` and ``&amp;`` read back as ``<`` and ``&``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from typing import Any

import anyio.to_thread
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from agent_memory_client.client import MemoryClient
from agent_memory_client.errors import MemoryApiError, MemoryClientError, ServiceUnavailable, VersionConflict
from agent_memory_client.fence import fence, fence_line, unfence
from agent_memory_client.types import ConversationContext, Note

ROOT = "/memories"
DOCUMENT = f"{ROOT}/MEMORY.md"
NOTES = f"{ROOT}/notes"
_DAY_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
_UNSAFE = re.compile(r"[\\%\x00-\x1f\x7f\u2028\u2029]")
_WIDTH = 6  # the line numbers' width, as the SDK's own file-backed memory tool prints them
_HEADING = re.compile(r"^#{1,6}(\s|$)")


def normalise(path: str) -> str:
    """The path inside ``/memories`` that ``path`` names, else a ToolError that says why."""
    if not isinstance(path, str) or _UNSAFE.search(path):
        raise ToolError(f"The path {path!r} is refused: use plain paths under {ROOT} (no %, \\ or control characters).")
    normal = posixpath.normpath(path) if path else ""
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    if normal != ROOT and not normal.startswith(ROOT + "/"):
        raise ToolError(f"The path {path} is outside {ROOT}: only {DOCUMENT} and {NOTES}/ exist.")
    return normal


def numbered(lines: list[str], start: int = 1) -> str:
    return "\n".join(f"{str(number).rjust(_WIDTH)}\t{line}" for number, line in enumerate(lines, start))


class ClaudeMemoryTool(BetaAbstractMemoryTool):
    """The ``anthropic`` SDK's memory tool, backed by the memory service for one conversation (``client`` with
    the conversation's ``context``), as :class:`~agent_memory_client.Conversation` is."""

    def __init__(self, client: MemoryClient, context: ConversationContext, **options: Any) -> None:
        super().__init__(**options)
        self.client = client
        self.context = replace(context, document_version=None)
        # The document's version and content as the model last read them by viewing MEMORY.md (or as its own
        # save on what it had read, or its own whole text, left them); None until then.
        self._read: tuple[int, str] | None = None

    # --- reading -------------------------------------------------------------------------------------------

    def _context(self) -> tuple[int, str, list[Note]]:
        answer = self._service(lambda: self.client.get_context(self.context))
        document = answer["document"]
        return document["version"], document["content"], list(answer["recent_notes"])

    def _days(self, notes: list[Note]) -> dict[str, list[Note]]:
        days: dict[str, list[Note]] = {}
        for note in sorted(notes, key=lambda note: (note["day"], note["position"])):
            days.setdefault(note["day"], []).append(note)
        return days

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = normalise(command.path)
        version, content, notes = self._context()
        days = self._days(notes)
        if path in (ROOT, NOTES):
            files = [f"{NOTES}/{day}.md" for day in sorted(days)]
            if path == ROOT:
                files = ([DOCUMENT] if version else []) + [f"{NOTES}/", *files]
            listing = "\n".join(f"- {name}" for name in files) or "(empty)"
            return f"Here're the files and directories in {path}:\n{listing}"
        if path == DOCUMENT:
            if not version:
                raise ToolError(f"The path {DOCUMENT} does not exist yet: write it with the create command.")
            self._read = (version, content)  # read only here: a directory's listing shows none of it
            lines = fence(content).split("\n")
        elif (day := self._day(path)) in days:
            lines = [f"- {fence_line(note['text'])}" for note in days[day]]
        else:
            raise ToolError(f"The path {path} does not exist. Please provide a valid path (view {ROOT} lists them).")
        start = 1
        if command.view_range and len(command.view_range) == 2:
            start = max(1, command.view_range[0])
            end = len(lines) if command.view_range[1] == -1 else command.view_range[1]
            lines = lines[start - 1 : end]
        return f"Here's the content of {path} with line numbers:\n{numbered(lines, start)}"

    @staticmethod
    def _day(path: str) -> str | None:
        directory, name = posixpath.split(path)
        match = _DAY_FILE.match(name)
        return match.group(1) if directory == NOTES and match else None

    # --- writing -------------------------------------------------------------------------------------------

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = normalise(command.path)
        if path == DOCUMENT:
            unread = self._read is None
            version = self._document_read()[0]
            if version and unread:  # never replaced blind: the model sees the text it would replace first
                raise ToolError(f"{DOCUMENT} already exists: view it first, then create it again to replace it.")
            return self._save(
                version, unfence(command.file_text), f"File created successfully at: {DOCUMENT}", whole=True
            )
        if posixpath.dirname(path) == NOTES and path.endswith(".md"):
            return self._remember(unfence(command.file_text))
        raise self._refused(path)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path = normalise(command.path)
        if path != DOCUMENT:
            raise self._refused(path, "notes are append-only: add a new note by inserting into a notes file")
        version, content = self._document()
        shown = fence(content)  # old_str is matched in the text as the model was shown it
        count = shown.count(command.old_str) if command.old_str else 0
        if count != 1:
            how = "did not appear verbatim" if count == 0 else f"appears {count} times; make it unique"
            raise ToolError(f"No replacement was performed: old_str `{command.old_str}` {how} in {DOCUMENT}.")
        edited = unfence(shown.replace(command.old_str, command.new_str, 1))
        return self._save(version, edited, f"{DOCUMENT} has been edited.")

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path = normalise(command.path)
        if self._day(path) is not None:
            return self._remember(unfence(command.insert_text))
        if path != DOCUMENT:
            raise self._refused(path)
        version, content = self._document()
        lines = content.split("\n") if content else []
        if not 0 <= command.insert_line <= len(lines):
            raise ToolError(f"Invalid `insert_line` {command.insert_line}: it should be within [0, {len(lines)}].")
        lines[command.insert_line : command.insert_line] = unfence(command.insert_text.rstrip("\n")).split("\n")
        return self._save(version, "\n".join(lines), f"{DOCUMENT} has been edited.")

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        normalise(command.path)
        raise ToolError(
            f"delete is not supported: nothing was deleted. Notes are append-only; to drop a line of {DOCUMENT}, "
            "str_replace it with nothing."
        )

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        normalise(command.old_path)
        normalise(command.new_path)
        raise ToolError(f"rename is not supported: nothing was moved. The files are {DOCUMENT} and {NOTES}/<day>.md.")

    def _document_read(self) -> tuple[int, str]:
        """The document's version and content as the model last read them; the service's now if it has not (an
        edit of the unread document applies to what is there, and reads nothing for the model)."""
        if self._read is not None:
            return self._read
        version, content, _ = self._context()
        return version, content

    def _document(self) -> tuple[int, str]:
        """The document to edit, as the model last read it: edits apply to what it saw."""
        version, content = self._document_read()
        if not version:
            raise ToolError(f"The path {DOCUMENT} does not exist yet: write it with the create command.")
        return version, content

    def _save(self, version: int, content: str, done: str, *, whole: bool = False) -> str:
        """A new version, based on ``version``; a conflict is told to the model, and nothing is saved. The saved
        document counts as read when the model had read the one it edited, or wrote the ``whole`` text."""
        context = replace(self.context, document_version=version)
        try:
            saved = self.client.update_memory(context, content)
        except VersionConflict:
            self._read = None
            raise ToolError(
                f"{DOCUMENT} was changed by someone else since you read it (version {version}): nothing was saved. "
                f"View {DOCUMENT} again, then redo your edit on what it holds now."
            ) from None
        except MemoryClientError as error:
            if not _unanswered(error):
                raise ToolError(f"Nothing was saved: {_reason(error)}.") from None
            self._read = None
            raise ToolError(
                f"The memory service did not confirm the edit, so it may or may not be saved ({_reason(error)}). "
                f"View {DOCUMENT} before you redo it."
            ) from None
        document = saved["document"]
        if whole or self._read is not None:
            self._read = (document["version"], document["content"])
        notes = "".join(f" Note: {warning}." for warning in saved["warnings"])
        return f"{done.removesuffix('.')} (version {document['version']}).{notes}"

    def _remember(self, text: str) -> str:
        """One note per non-blank line that is not a heading; what was written, and any refusal, in the answer."""
        lines = [line.strip() for line in text.split("\n")]
        facts = [line for line in lines if line and not _HEADING.match(line)]
        if not facts:
            raise ToolError("Nothing to remember: write one fact per line (headings and blank lines are skipped).")
        written: list[str] = []
        for fact in facts:
            try:
                answer = self.client.remember(self.context, fact)
            except MemoryClientError as error:
                done = f" Remembered before it: {', '.join(written)}." if written else ""
                if not _unanswered(error):
                    done = done or " Nothing was remembered."
                    raise ToolError(f"The note `{fact[:80]}` was not remembered: {_reason(error)}.{done}") from None
                raise ToolError(
                    f"The memory service did not confirm the note `{fact[:80]}`, so it may or may not have been "
                    f"remembered ({_reason(error)}).{done} View {NOTES}/<today>.md before you write it again."
                ) from None
            note = answer["note"]
            written.append(f"{note['id']}{' (cut to 2,000 characters)' if answer['truncated'] else ''}")
        day = written[0].split(".", 1)[0]
        return f"Remembered {len(written)} note(s) in {NOTES}/{day}.md (notes are written today): {', '.join(written)}."

    def _refused(self, path: str, why: str = "") -> ToolError:
        because = f" ({why})" if why else ""
        return ToolError(
            f"{path} cannot be written{because}: nothing was written. Edit {DOCUMENT}, or add a fact by inserting "
            f"into {NOTES}/<today>.md or creating a new file in {NOTES}/."
        )

    def _service(self, call: Any) -> Any:
        try:
            return call()
        except MemoryApiError as error:
            raise ToolError(f"The memory service refused: {error.message} ({error.code}).") from None
        except MemoryClientError as error:
            raise ToolError(f"The memory service could not be reached: {error}") from None


def _unanswered(error: MemoryClientError) -> bool:
    """Whether a write that raised ``error`` may have happened: no answer, or a 503 (docs/api.md §6 "Storage
    faults": the outcome is unknown), as against a refusal, which wrote nothing."""
    return not isinstance(error, MemoryApiError) or isinstance(error, ServiceUnavailable)


def _reason(error: MemoryClientError) -> str:
    return f"{error.message} ({error.code})" if isinstance(error, MemoryApiError) else str(error)


def _on_a_thread(name: str) -> Any:
    """The async command ``name``: :class:`ClaudeMemoryTool`'s, run on a worker thread."""

    async def command(self: AsyncClaudeMemoryTool, command: Any) -> str:
        result: str = await anyio.to_thread.run_sync(getattr(self.tool, name), command)
        return result

    command.__name__ = command.__qualname__ = name
    return command


class AsyncClaudeMemoryTool(BetaAsyncAbstractMemoryTool):
    """:class:`ClaudeMemoryTool` for the SDK's async tool runner (``AsyncAnthropic``): the same commands and
    answers, each run on a worker thread with the blocking ``client``, so the event loop is never blocked."""

    def __init__(self, client: MemoryClient, context: ConversationContext, **options: Any) -> None:
        super().__init__(**options)
        self.tool = ClaudeMemoryTool(client, context)

    view = _on_a_thread("view")
    create = _on_a_thread("create")
    str_replace = _on_a_thread("str_replace")
    insert = _on_a_thread("insert")
    delete = _on_a_thread("delete")
    rename = _on_a_thread("rename")
