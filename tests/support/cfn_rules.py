"""template.yaml's ``Rules`` and ``Conditions`` evaluated for a set of parameter values, as CloudFormation does
before it creates anything: which rules refuse a deploy, and which conditions hold.

Only the functions the template uses in them are known (``Ref`` of a parameter, ``Fn::Equals``, ``Fn::Not``,
``Fn::And``, ``Fn::Or``, ``Fn::Condition``, ``Fn::Select``, ``Fn::Split``, ``Fn::Join``, ``Fn::Sub`` of
parameters); anything else raises, so a rule written with another function cannot pass here unread.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from local.template import load_template


def parameter_values(**given: str) -> dict[str, Any]:
    """Every parameter's value: the given ones over the defaults; a CommaDelimitedList is a list."""
    values: dict[str, Any] = {}
    for name, spec in load_template()["Parameters"].items():
        value = str(given.pop(name, spec.get("Default", "")))
        values[name] = value.split(",") if spec["Type"] == "CommaDelimitedList" else value
    assert not given, f"not parameters of template.yaml: {sorted(given)}"
    return values


def evaluate(node: Any, values: Mapping[str, Any]) -> Any:
    if not isinstance(node, dict):
        return node
    ((function, argument),) = node.items()
    match function:
        case "Ref":
            return values[argument]
        case "Fn::Equals":
            left, right = (evaluate(a, values) for a in argument)
            return str(left) == str(right)
        case "Fn::Not":
            return not evaluate(argument[0], values)
        case "Fn::And":
            return all(evaluate(a, values) for a in argument)
        case "Fn::Or":
            return any(evaluate(a, values) for a in argument)
        case "Fn::Condition":
            return condition(argument, values)
        case "Fn::Select":
            return evaluate(argument[1], values)[int(argument[0])]
        case "Fn::Split":
            return str(evaluate(argument[1], values)).split(argument[0])
        case "Fn::Join":
            return argument[0].join(str(v) for v in evaluate(argument[1], values))
        case "Fn::Sub" if isinstance(argument, str):
            return re.sub(r"\$\{([A-Za-z0-9]+)\}", lambda m: str(values[m.group(1)]), argument)
    raise NotImplementedError(f"{function} is not evaluated here")


def condition(name: str, values: Mapping[str, Any]) -> bool:
    return bool(evaluate(load_template()["Conditions"][name], values))


def refusals(**given: str) -> list[str]:
    """The names of the rules that refuse a deploy with these parameters (besides the defaults)."""
    values = parameter_values(**given)
    refused = []
    for name, rule in load_template()["Rules"].items():
        if "RuleCondition" in rule and not evaluate(rule["RuleCondition"], values):
            continue
        if not all(evaluate(assertion["Assert"], values) for assertion in rule["Assertions"]):
            refused.append(name)
    return refused


def resolve_conditions(node: Any, values: Mapping[str, Any]) -> Any:
    """``node`` with every ``Fn::If`` replaced by its chosen branch and every ``AWS::NoValue`` left out, as
    CloudFormation resolves a (transformed) template's properties; other functions are kept as written."""
    if isinstance(node, list):
        kept = (resolve_conditions(item, values) for item in node)
        return [item for item in kept if item is not _NO_VALUE]
    if not isinstance(node, dict):
        return node
    if node == {"Ref": "AWS::NoValue"}:
        return _NO_VALUE
    if list(node) == ["Fn::If"]:
        name, chosen, otherwise = node["Fn::If"]
        return resolve_conditions(chosen if condition(name, values) else otherwise, values)
    resolved = {key: resolve_conditions(value, values) for key, value in node.items()}
    return {key: value for key, value in resolved.items() if value is not _NO_VALUE}


_NO_VALUE = object()
