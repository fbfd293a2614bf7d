"""``/v1/context`` makes its two reads (the document, the recent notes) at once (issue 15, "Also"): each read
waits here until the other has started, which two reads made one after the other never do."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tests.support.faults import ScriptedClient, provide_clients
from tests.support.scopes import private


def test_the_document_and_the_notes_are_read_at_the_same_time(call):
    assert call("update_memory", {"context": private(), "arguments": {"content": "# Me\n- Likes tea."}}).status == 200
    assert call("remember", {"context": private(), "arguments": {"text": "Walks at seven"}}).status == 201
    both_started = threading.Barrier(2, timeout=5)
    started: list[str] = []

    def meeting(method: str) -> Callable[..., Any]:
        def read(real: Any, **request: Any) -> Any:
            if method not in started:  # the turn's read (what follows it, e.g. the injection record, goes through)
                started.append(method)
                both_started.wait()  # sequential reads: BrokenBarrierError after 5 s, and the turn degrades
            return real(**request)

        return read

    # the document is read with GetItem, the notes with a Query
    provide_clients(lambda client: ScriptedClient(client, get_item=meeting("get_item"), query=meeting("query")))
    answer = call("context", {"context": private()})

    assert answer.status == 200
    assert answer.body["degraded"] == []
    assert answer.body["document"]["content"] == "# Me\n- Likes tea."
    assert [note["text"] for note in answer.body["recent_notes"]] == ["Walks at seven"]
    assert sorted(started) == ["get_item", "query"]


def _read_aside_in_child(answers: Any) -> None:
    from agent_memory.basics.aside import start_aside

    answers.put(start_aside(lambda: "read in the child").result(timeout=5))


def test_a_forked_child_reads_aside_on_a_pool_of_its_own():
    """The local stack and the tests fork sandboxes after the parent used its pool: a child must not wait on
    the parent's threads, which do not exist in it."""
    import multiprocessing

    from agent_memory.basics.aside import start_aside

    assert start_aside(lambda: "read in the parent").result(timeout=5) == "read in the parent"
    fork = multiprocessing.get_context("fork")
    answers = fork.Queue()
    child = fork.Process(target=_read_aside_in_child, args=(answers,))
    child.start()
    child.join(timeout=30)

    assert child.exitcode == 0
    assert answers.get(timeout=1) == "read in the child"
