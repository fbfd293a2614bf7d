"""What each function is granted, read from template.yaml as CloudFormation would resolve it for the stack the
test runs, and decided as IAM decides within one role: allowed by some statement, denied by none.

A ``!Ref`` to a resource or parameter that the function's environment passes to the code (``MEMORY_TABLE_NAME:
!Ref MemoryTable``, ``OPENAI_API_KEY_SECRET: !Ref OpenAIApiKeySecret``) is what the test set in that variable;
any other resource is its logical id (the local name of a table), any other parameter its default (empty: none);
``!GetAtt X.Arn``, ``!Sub``, ``!Select`` of ``!Split`` and ``Fn::If`` (either way) are evaluated on that.
Statements come from ``Policies`` (inline, or a template's ``AWS::IAM::ManagedPolicy`` by ``!Ref``) or from the
``Role`` the function names. A statement with a ``Condition`` grants nothing here (none is needed for what a call
names); a ``Deny`` wins over any ``Allow``. SAM policy templates are not expanded (the template uses none): a
call one would grant is refused, loudly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import product
from typing import Any

from local.template import load_template
from tests.support.iam.arns import ACCOUNT, PARTITION, domain_arn, function_arn, queue_arn, region, table_arn

_PSEUDO = {"AWS::Partition": lambda: PARTITION, "AWS::AccountId": lambda: ACCOUNT, "AWS::Region": region}


@dataclass(frozen=True)
class Statement:
    """One statement as it applies to the stack under test: its actions and its resources' ARN patterns."""

    allow: bool
    actions: tuple[str, ...]
    resources: tuple[str, ...]

    def covers(self, action: str, resource: str) -> bool:
        return any(_like(pattern, action, case=False) for pattern in self.actions) and any(
            _like(pattern, resource) for pattern in self.resources
        )


def is_allowed(statements: list[Statement], action: str, resource: str) -> bool:
    """IAM's evaluation within one role: allowed by some statement, denied by none."""
    covering = [statement.allow for statement in statements if statement.covers(action, resource)]
    return bool(covering) and all(covering)


def is_granted(function: str, action: str, resource: str) -> bool:
    return decided(function, stack_of(function), action, resource)


@lru_cache(maxsize=4096)
def decided(function: str, stack: tuple[Any, ...], action: str, resource: str) -> bool:
    """Decided once per stack (a test's environment) and call: a run makes hundreds of thousands of calls."""
    return is_allowed(_granted(function, stack), action, resource)


def granted(function: str) -> list[Statement]:
    """The function's statements in template.yaml, for the stack under test (its environment as set now)."""
    return _granted(function, stack_of(function))


def stack_of(function: str) -> tuple[Any, ...]:
    """What the function's grants depend on in the environment: the region, and each variable given a ``!Ref``."""
    return (region(), *(os.environ.get(variable) for variable in _bound_variables(function)))


@lru_cache(maxsize=64)
def _granted(function: str, stack: tuple[Any, ...]) -> list[Statement]:
    values = dict(zip(_bound_variables(function).values(), stack[1:], strict=True))
    return statements(load_template(), function, {name: value for name, value in values.items() if value})


@cache
def _bound_variables(function: str) -> dict[str, str]:
    """The environment variables that give the function a ``!Ref`` its policies use: variable -> what it names."""
    template = load_template()
    used = set(re.findall(r"\w+", repr(_policy_documents(template, function))))
    return {variable: name for variable, name in _references(template, function).items() if name in used}


def _references(template: Mapping[str, Any], function: str) -> dict[str, str]:
    shared = template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    own = template["Resources"][function]["Properties"].get("Environment", {}).get("Variables", {})
    return {
        variable: value["Ref"]
        for variable, value in {**shared, **own}.items()
        if isinstance(value, dict) and isinstance(value.get("Ref"), str)
    }


def statements(template: Mapping[str, Any], function: str, local: Mapping[str, str]) -> list[Statement]:
    """The statements of ``function`` in ``template``, with ``local`` the value each named resource or parameter
    has in the stack under test (the rest: a resource's logical id, a parameter's default)."""
    resolve = _Resolver(template, local)
    return [
        Statement(
            raw["Effect"] == "Allow",
            tuple(_listed(raw["Action"])),
            tuple(arn for resource in _listed(raw["Resource"]) for arn in resolve(resource)),
        )
        for raw in (leaf for document in _policy_documents(template, function) for leaf in _either_way(document))
        if "Condition" not in raw
    ]


def _policy_documents(template: Mapping[str, Any], function: str) -> list[Any]:
    """The function's statements as written (each maybe an ``Fn::If``): its ``Policies``, or its own role's."""
    properties = template["Resources"][function]["Properties"]
    documents = [document for policy in properties.get("Policies", []) for document in _documents(template, policy)]
    role = properties.get("Role")
    if isinstance(role, dict) and "Fn::GetAtt" in role:
        role_properties = template["Resources"][_split_attribute(role["Fn::GetAtt"])[0]]["Properties"]
        for policy in role_properties.get("Policies", []):
            documents += _documents(template, policy["PolicyDocument"])
        for policy in role_properties.get("ManagedPolicyArns", []):
            documents += _documents(template, policy)
    return documents


def _documents(template: Mapping[str, Any], policy: Any) -> list[Any]:
    """The statements (each maybe an ``Fn::If``) of one entry of ``Policies`` or ``ManagedPolicyArns``."""
    if isinstance(policy, dict) and "Fn::If" in policy:
        _, when_true, when_false = policy["Fn::If"]
        return _documents(template, when_true) + _documents(template, when_false)
    if isinstance(policy, dict) and "Statement" in policy:
        return _listed(policy["Statement"])
    reference = policy.get("Ref") if isinstance(policy, dict) else None
    managed = template["Resources"].get(reference, {}) if isinstance(reference, str) else {}
    if managed.get("Type") == "AWS::IAM::ManagedPolicy":
        return _listed(managed["Properties"]["PolicyDocument"]["Statement"])
    return []  # AWS::NoValue, or an AWS managed policy by name


def _either_way(statement: Any) -> list[dict[str, Any]]:
    if isinstance(statement, dict) and "Fn::If" in statement:
        _, when_true, when_false = statement["Fn::If"]
        return _either_way(when_true) + _either_way(when_false)
    return [statement] if isinstance(statement, dict) and "Effect" in statement else []


class _Resolver:
    """CloudFormation's intrinsic functions, each giving every value it may take (``Fn::If`` either way)."""

    def __init__(self, template: Mapping[str, Any], local: Mapping[str, str]) -> None:
        self._template, self._local = template, local

    def __call__(self, value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if not isinstance(value, dict) or len(value) != 1:
            return []
        [(function, argument)] = value.items()
        if function == "Ref":
            return self._ref(argument)
        if function == "Fn::GetAtt":
            return self._attribute(*_split_attribute(argument))
        if function == "Fn::If":
            return self(argument[1]) + self(argument[2])
        if function == "Fn::Sub":
            text, names = (argument, {}) if isinstance(argument, str) else argument
            return self._sub(text, names)
        if function == "Fn::Select" and isinstance(argument[1], dict) and "Fn::Split" in argument[1]:
            index, (separator, source) = int(argument[0]), argument[1]["Fn::Split"]
            return [parts[index] for text in self(source) if len(parts := text.split(separator)) > index]
        return []

    def _ref(self, name: str) -> list[str]:
        if name in _PSEUDO:
            return [_PSEUDO[name]()]
        if name in self._local:
            return [self._local[name]]
        parameter = self._template.get("Parameters", {}).get(name)
        if parameter is not None:
            return [str(parameter["Default"])] if parameter.get("Default") else []  # empty: it names nothing
        return [name] if name in self._template["Resources"] else []

    def _attribute(self, name: str, attribute: str) -> list[str]:
        kind = self._template["Resources"].get(name, {}).get("Type")
        arn_of = _ARN_OF_REF.get(kind) if attribute == "Arn" else None
        return [arn_of(value) for value in self._ref(name)] if arn_of else []

    def _sub(self, text: str, names: Mapping[str, Any]) -> list[str]:
        pieces = re.split(r"\$\{([^}!]+)\}", text)
        choices: list[list[str]] = []
        for position, piece in enumerate(pieces):
            if position % 2 == 0:
                choices.append([piece])
            elif piece in names:
                choices.append(self(names[piece]))
            elif "." in piece and not piece.startswith("AWS::"):
                choices.append(self._attribute(*piece.split(".", 1)))
            else:
                choices.append(self._ref(piece))
        return ["".join(parts) for parts in product(*choices)]


_ARN_OF_REF: dict[str | None, Callable[[str], str]] = {
    "AWS::DynamoDB::Table": table_arn,
    "AWS::SQS::Queue": queue_arn,
    "AWS::Serverless::Function": function_arn,
    "AWS::Lambda::Function": function_arn,
    "AWS::OpenSearchService::Domain": domain_arn,
}


def _split_attribute(target: Any) -> tuple[str, str]:
    name, attribute = target.split(".", 1) if isinstance(target, str) else target
    return name, attribute


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@cache
def _pattern(pattern: str, case: bool) -> re.Pattern[str]:
    wildcards = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(wildcards, 0 if case else re.IGNORECASE)


def _like(pattern: str, value: str, *, case: bool = True) -> bool:
    """IAM's matching: ``*`` any run of characters, ``?`` any one; actions regardless of case."""
    return _pattern(pattern, case).fullmatch(value) is not None
