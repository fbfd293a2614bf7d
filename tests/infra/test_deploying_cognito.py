"""docs/deploying.md's Cognito recipe grants no one a workspace: the membership attributes that the token's
``workspaces`` and ``memory_admin`` claims come from are never writable by the users themselves.

Cognito lets an app client's users change every mutable attribute of their own profile
(``UpdateUserAttributes``) unless the client lists what they may write; ``UpdateUserPoolClient`` resets every
setting it is not given. So every command of the recipe that creates or updates a client must name
``--write-attributes``, without the two. Each command is also read against the AWS CLI's own model of the
operation (botocore's service model): every option it passes exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import botocore.session
import pytest
from botocore import xform_name

DOC = Path(__file__).resolve().parents[2] / "docs" / "deploying.md"
MEMBERSHIP = {"custom:workspaces", "custom:memory_admin"}
CLIENT_COMMANDS = {"create-user-pool-client", "update-user-pool-client"}


def cognito_commands() -> list[list[str]]:
    """Every ``aws cognito-idp`` command in the document's shell blocks, as words (continuations joined)."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.DOTALL):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"^\s*\w+=\$\(", "", line.split(" #")[0]).rstrip(")")
            if "aws cognito-idp " in line:
                words = shlex.split(line[line.index("aws cognito-idp ") :])
                commands.append(words[2:])
    return commands


def options(words: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    name = None
    for word in words[1:]:
        if word.startswith("--"):
            name = word[2:]
            found[name] = []
        elif name is not None:
            found[name].append(word)
    return found


COMMANDS = cognito_commands()


def test_the_recipe_has_its_commands():
    assert {words[0] for words in COMMANDS} >= {
        "create-user-pool",
        "create-user-pool-client",
        "update-user-pool-client",
        "admin-update-user-attributes",
    }


@pytest.mark.parametrize("words", [w for w in COMMANDS if w[0] in CLIENT_COMMANDS], ids=lambda w: w[0])
def test_every_app_client_names_what_users_may_write_and_it_is_not_a_membership(words):
    given = options(words)

    assert "write-attributes" in given, "without it, users may write every attribute, memberships included"
    assert given["write-attributes"], "an empty list is read as no list"
    assert MEMBERSHIP.isdisjoint(given["write-attributes"])


def test_memberships_are_set_by_an_administrator_only():
    setters = [w for w in COMMANDS if any(name in " ".join(w) for name in MEMBERSHIP) and "user-attributes" in w[0]]

    assert setters
    assert all(words[0] == "admin-update-user-attributes" for words in setters)
    assert "update-user-attributes" not in {words[0] for words in COMMANDS}


def test_the_pool_defines_both_attributes_as_the_trigger_reads_them():
    (create,) = [w for w in COMMANDS if w[0] == "create-user-pool"]

    schema = " ".join(options(create)["schema"])
    assert "Name=workspaces," in schema and "Name=memory_admin," in schema


@pytest.mark.parametrize("words", COMMANDS, ids=lambda w: w[0])
def test_every_option_exists_in_the_operation(words):
    model = botocore.session.get_session().get_service_model("cognito-idp")
    operation = next(name for name in model.operation_names if xform_name(name, "-") == words[0])
    members = {xform_name(member, "-") for member in model.operation_model(operation).input_shape.members}
    cli_only = {"query", "output"}

    unknown = [name for name in options(words) if name not in cli_only and name.removeprefix("no-") not in members]

    assert unknown == []
