"""What template.yaml refuses before CloudFormation creates anything (its Rules), and that docs/deploying.md's
parameter sets pass them: the defaults (no dashboard) pass, and so does a real issuer."""

from __future__ import annotations

import re
import tomllib

import pytest

from local.template import load_template
from tests.support.cfn_rules import refusals
from tests.support.docs import OVERRIDE, code_blocks

COGNITO = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"


def test_the_defaults_and_a_real_issuer_pass_the_rules() -> None:
    assert refusals() == []
    assert refusals(DashboardIssuer=COGNITO) == []


@pytest.mark.parametrize("issuer", ["http://issuer.example.org/", "cognito-idp.eu-west-1.amazonaws.com/x", " "])
def test_an_issuer_that_is_not_an_https_url_is_refused_by_its_pattern(issuer: str) -> None:
    pattern = load_template()["Parameters"]["DashboardIssuer"]["AllowedPattern"]

    assert re.fullmatch(pattern, issuer) is None
    assert re.fullmatch(pattern, COGNITO)
    assert re.fullmatch(pattern, "")  # no dashboard


def test_the_other_rules_still_refuse_what_they_name() -> None:
    assert refusals(DashboardIssuer=COGNITO, DashboardHosting="true") == ["DashboardHostingNeedsAClient"]
    assert refusals(DashboardIssuer=COGNITO, NotesIndex="existing") == ["ExistingIndexIsNamed"]


def test_every_parameter_set_of_the_deploying_guide_passes_the_rules() -> None:
    examples = [tomllib.loads(block) for block in code_blocks("toml")]

    for example in examples:
        overrides = example["default"]["deploy"]["parameters"]["parameter_overrides"]
        values = {key: value.strip('"').replace('\\"', '"') for key, value in OVERRIDE.findall(overrides)}
        assert refusals(**values) == [], values
