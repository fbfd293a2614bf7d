"""Every answer's class is named ``<published name>Answer`` and published under that name, so the domain's records
(``notes.Note``, ``document.Document``) and the answers built from them never share a name, while docs/openapi.json
and the clients' types keep the names they always had."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

import agent_memory.edges.responses  # noqa: F401  (its answers: the tool list, the health check)
from agent_memory.domain import document, notes
from agent_memory.domain.shapes import Answer, published_name

OPENAPI = json.loads((Path(__file__).resolve().parents[2] / "docs" / "openapi.json").read_text())


def answers(model: type[BaseModel] = Answer) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for sub in model.__subclasses__():
        found += [sub, *answers(sub)]
    return found


ANSWERS = sorted(answers(), key=lambda model: model.__name__)


def test_the_answers_are_enumerated() -> None:
    assert len(ANSWERS) >= 40
    assert {model.__name__ for model in ANSWERS} >= {"NoteAnswer", "DocumentAnswer", "OriginAnswer", "AuthorAnswer"}


@pytest.mark.parametrize("model", ANSWERS, ids=lambda model: model.__name__)
def test_each_answer_is_named_answer_and_published_without_the_suffix(model: type[BaseModel]) -> None:
    name = published_name(model)

    assert model.__name__ == f"{name}Answer"
    assert model.model_json_schema()["title"] == name
    assert name in OPENAPI["components"]["schemas"]


def test_no_answer_shares_its_class_name_with_a_domain_record() -> None:
    records = {name for module in (notes, document) for name, value in vars(module).items() if isinstance(value, type)}

    assert records >= {"Note", "Origin", "Document", "Author"}
    assert not records & {model.__name__ for model in ANSWERS}
