"""docs/api.md §3 ``update_memory``: limits, history, optimistic concurrency and the compression rewrite."""

from __future__ import annotations

import pytest

from agent_memory.domain.scope import Scope
from agent_memory.storage.document_store import DocumentStore
from tests.support.fakes import FakeChatModel
from tests.support.models import scripted_models
from tests.support.scopes import private, shared


def _update(call, content, context=None):
    return call("update_memory", {"context": context or private(), "arguments": {"content": content}})


PERSONAL = Scope("personal", "u-1")


def _history(aws, scope=PERSONAL):
    store = DocumentStore(aws, "MemoryTable")
    head = store.current(scope, consistent=True)
    return head, [store.version(scope, v) for v in range(1, head.version + 1)]


@pytest.fixture
def model():
    """The service's chat model replaced by a named fake (no model can run here)."""
    fake = FakeChatModel()
    scripted_models().compression = fake
    return fake


def test_first_write_is_version_1(call):
    answer = _update(call, "# Memory\n- likes tea")

    assert answer.status == 200
    assert answer.body == {
        "document": {
            "content": "# Memory\n- likes tea",
            "version": 1,
            "chars": 20,
            "updated_at": "2026-12-03T10:15:00.000Z",
        },
        "compressed": False,
        "warnings": [],
    }


def test_every_version_is_kept_with_reason_and_author(call, aws):
    _update(call, "one", private(thread="t-1"))
    _update(call, "two", private(thread="t-2"))

    head, versions = _history(aws)
    assert head.content == "two" and head.version == 2
    assert [(doc.content, reason, by.thread_id) for doc, reason, by in versions] == [
        ("one", "tool", "t-1"),
        ("two", "tool", "t-2"),
    ]


@pytest.mark.parametrize("content", ["", "   ", "\n\n\t"])
def test_empty_content_is_422_and_nothing_changes(call, aws, content):
    _update(call, "keep me")

    answer = _update(call, content)

    assert answer.status == 422
    assert answer.body["details"][0]["type"] == "empty_document"
    assert _history(aws)[0].content == "keep me"


def test_matching_document_version_saves(call):
    _update(call, "v1")

    answer = _update(call, "v2", private(document_version=1))

    assert answer.status == 200
    assert answer.body["document"]["version"] == 2


@pytest.mark.parametrize("stale", [0, 2, 7])
def test_stale_document_version_is_409_and_nothing_changes(call, aws, stale):
    _update(call, "v1")

    answer = _update(call, "lost?", private(document_version=stale))

    assert answer.status == 409
    assert answer.body["error"]["code"] == "version_conflict"
    head, versions = _history(aws)
    assert (head.version, head.content, len(versions)) == (1, "v1", 1)


def test_document_version_0_means_no_document_yet(call):
    assert _update(call, "first", private(document_version=0)).status == 200
    assert _update(call, "again", private(document_version=0)).status == 409


def test_scopes_have_separate_documents_and_versions(call, aws):
    _update(call, "personal")
    answer = _update(call, "team", shared("w-a"))

    assert answer.body["document"]["version"] == 1
    assert _history(aws)[0].content == "personal"
    assert _history(aws, Scope("team", "w-a"))[0].content == "team"


def test_two_writes_with_the_same_version_give_one_200_and_one_409(sandboxes):
    sandboxes([("update_memory", {"context": private(), "arguments": {"content": "base"}})])

    answers = sandboxes(
        [
            (
                "update_memory",
                {"context": private(document_version=1, thread=f"t-{i}"), "arguments": {"content": f"edit {i}"}},
            )
            for i in range(2)
        ]
    )

    assert sorted(a.status for a in answers) == [200, 409]
    winner = next(a for a in answers if a.status == 200).body["document"]
    context = sandboxes([("context", {"context": private()})])[0].body
    assert context["document"] == winner
    assert winner["version"] == 2


def test_unversioned_parallel_writes_all_land_in_history(sandboxes):
    answers = sandboxes(
        [("update_memory", {"context": private(thread=f"t-{i}"), "arguments": {"content": f"w{i}"}}) for i in range(6)]
    )

    assert [a.status for a in answers] == [200] * 6
    assert sorted(a.body["document"]["version"] for a in answers) == [1, 2, 3, 4, 5, 6]


def test_over_the_soft_limit_saves_with_a_warning(call):
    answer = _update(call, "x" * 18_001)

    assert answer.status == 200
    assert answer.body["compressed"] is False
    assert answer.body["document"]["chars"] == 18_001
    assert len(answer.body["warnings"]) == 1 and "18,000" in answer.body["warnings"][0]


def test_exactly_at_the_soft_limit_has_no_warning(call):
    assert _update(call, "x" * 18_000).body["warnings"] == []


def test_exactly_at_the_hard_limit_saves_without_compression(call):
    answer = _update(call, "x" * 25_000)

    assert answer.status == 200
    assert answer.body["compressed"] is False


def test_over_the_hard_limit_without_a_model_is_422_and_nothing_changes(call, aws):
    _update(call, "keep me")

    answer = _update(call, "x" * 25_001)

    assert answer.status == 422
    assert answer.body["error"]["code"] == "document_too_large"
    assert "no chat model" in answer.body["error"]["message"]
    assert _history(aws)[0].content == "keep me"


def test_over_the_hard_limit_is_compressed_by_the_model_and_saved(call, aws, model):
    model.reply = lambda system, prompt: "```markdown\n# Memory\n" + "fact. " * 2000 + "\n```"

    answer = _update(call, "fact. " * 5000)

    assert answer.status == 200
    assert answer.body["compressed"] is True
    content = answer.body["document"]["content"]
    assert content.startswith("# Memory") and not content.endswith("```")
    assert answer.body["document"]["chars"] == len(content) < 25_000
    assert "keep every fact" in model.calls[0][0]
    assert "fact. fact." in model.calls[0][1]
    _head, versions = _history(aws)
    assert versions[-1][1] == "compression"


def test_compression_that_does_not_fit_is_422_and_nothing_changes(call, aws, model):
    _update(call, "keep me")
    model.reply = lambda system, prompt: "y" * 25_001

    answer = _update(call, "x" * 30_000)

    assert answer.status == 422
    assert answer.body["error"]["code"] == "document_too_large"
    assert _history(aws)[0].content == "keep me"


def test_compression_that_drops_most_of_the_document_is_refused(call, aws, model):
    model.reply = lambda system, prompt: "short"

    answer = _update(call, "x" * 30_000)

    assert answer.status == 422
    assert _history(aws)[0].version == 0


def test_a_failing_model_is_503_and_nothing_changes(call, aws, model):
    _update(call, "keep me")
    model.fail_with = "timed out"

    answer = _update(call, "x" * 30_000)

    assert answer.status == 503
    assert answer.body["error"]["code"] == "model_unavailable"
    assert _history(aws)[0].content == "keep me"


def test_a_stale_version_is_refused_before_the_model_is_called(call, model):
    _update(call, "v1")

    answer = _update(call, "x" * 30_000, private(document_version=0))

    assert answer.status == 409
    assert model.calls == []
