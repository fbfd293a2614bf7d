"""bench/cost.py: the cost table of docs/deploying.md follows from the bench's measured figures, and the one in the
docs is the one those figures give."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from bench import cost, fold_tokens
from local.template import load_template

DEPLOYING = Path(__file__).resolve().parents[2] / "docs" / "deploying.md"


@pytest.fixture(scope="module")
def measured() -> cost.Measured:
    return cost.Measured.load()


def line(lines: list[cost.Line], item: str) -> cost.Line:
    return next(entry for entry in lines if entry.item.startswith(item))


def test_the_deploying_guide_shows_the_table_of_the_committed_bench_figures(measured: cost.Measured) -> None:
    shown = re.search(r"^\| per 1,000 active users.*?^\| \*\*total\*\*.*?$", DEPLOYING.read_text(), re.M | re.S)

    assert shown, "docs/deploying.md has the cost table"
    assert shown.group(0) == cost.table(measured)


def test_the_model_line_is_the_folds_and_flushes_tokens_at_the_stated_prices(measured: cost.Measured) -> None:
    folds = fold_tokens.measure(scale=0)

    model = line(cost.lines(measured), "Chat model")

    per_user = fold_tokens.cost_per_user_month(folds, "edits", cost.CHAT_PRICES)
    assert model.without_index == pytest.approx(1_000 * per_user)
    assert measured.fold_output_tokens < measured.fold_input_tokens  # cited edits: the document goes in, not out


def test_more_measured_requests_cost_more_and_users_scale_every_variable_line(measured: cost.Measured) -> None:
    heavier = dataclasses.replace(measured, context_requests=measured.context_requests + 1)

    assert (
        line(cost.lines(heavier), "DynamoDB on-demand").without_index
        > line(cost.lines(measured), "DynamoDB on-demand").without_index
    )
    for one, two in zip(cost.lines(measured, 1_000), cost.lines(measured, 2_000), strict=True):
        if one.item in ("CloudWatch alarms", "OpenSearch domain"):  # fixed a month
            assert (one.without_index, one.with_domain) == (two.without_index, two.with_domain)
        else:
            assert two.with_domain == pytest.approx(2 * one.with_domain)


def test_the_domain_is_billed_only_with_the_index_and_by_the_hour(measured: cost.Measured) -> None:
    domain = line(cost.lines(measured), "OpenSearch domain")

    assert domain.without_index == 0
    assert domain.with_domain == pytest.approx(730 * 0.036 + 10 * 0.122)
    assert all(entry.with_domain >= entry.without_index for entry in cost.lines(measured))


def test_a_bench_file_without_a_figure_is_an_error_not_a_zero(tmp_path: Path) -> None:
    partial = tmp_path / "benchmarks.json"
    partial.write_text('{"context": {"requests": 2}}')

    with pytest.raises(KeyError):
        cost.Measured.load(partial)


def test_the_assumptions_that_the_template_decides_follow_it() -> None:
    """The function memory, the alarms and the created domain's size are the template's defaults, not guesses."""
    template = load_template()
    parameters, resources = template["Parameters"], template["Resources"]
    alarms = [r for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"]

    assert template["Globals"]["Function"]["MemorySize"] / 1024 == cost.MEMORY_GB
    assert parameters["Architecture"]["Default"] == cost.ARCHITECTURE
    assert cost.ALARMS == sum("Condition" not in alarm for alarm in alarms) == len(alarms) - 1
    assert parameters["NotesDomainVolumeSize"]["Default"] == cost.DOMAIN_GB
    assert parameters["NotesDomainInstanceType"]["Default"] == "t3.small.search"
    assert parameters["NotesDomainInstanceCount"]["Default"] == 1
