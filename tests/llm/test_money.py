"""Dollar amounts are printed with enough precision, the same way everywhere (issue 21,
item 22): a budget of $0.008 is never shown as "$0.01"."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from evaluate_support import only_results, prepare_workspace, run_cli, write_inputs
from fakes.anthropic_server import FakeAnthropicServer
from generate_support import DOCS, generate_arguments
from hypothesis import given
from hypothesis import strategies as st

from rag_evaluator.text.money import dollar_range, format_usd


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (0.0, "$0.00"),
        (5.0, "$5.00"),
        (0.008, "$0.008"),
        (0.0003, "$0.0003"),
        (0.5, "$0.50"),
        (0.125, "$0.125"),
        (4.9731, "$4.973"),
        (12.3456, "$12.35"),
        (1234.5, "$1234.50"),
        (0.099996, "$0.10"),
        (0.0000123456, "$0.00001235"),
    ],
)
def test_amounts_show_at_least_cents_and_four_significant_digits(amount: float, shown: str) -> None:
    assert format_usd(amount) == shown


@given(st.floats(min_value=1e-7, max_value=1e7))
def test_a_shown_amount_reads_back_within_its_fourth_digit(amount: float) -> None:
    shown = format_usd(amount)
    assert shown.startswith("$")
    digits = shown[1:]
    whole, _, decimals = digits.partition(".")
    assert whole.isdigit() and decimals.isdigit() and len(decimals) >= 2
    assert math.isclose(float(digits), amount, rel_tol=5e-4, abs_tol=0.005 if amount >= 1 else 0)


@given(st.floats(min_value=1e-7, max_value=100), st.floats(min_value=1, max_value=5))
def test_an_estimate_range_shows_its_low_end_and_both_ends_alike(low: float, factor: float) -> None:
    text = dollar_range(low, low * factor)
    first, _, second = text.partition(" to ")
    assert len(first.partition(".")[2]) == len(second.partition(".")[2])
    assert float(first[1:]) > 0  # never "$0.0000" for a real amount


def test_the_budget_line_shows_a_budget_below_a_cent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    # The budget is too small for a call: the run stops before the first (exit 2).
    result = run_cli(["evaluate", "--delay", "0", "--yes", "--max-cost", "0.008"])
    assert "Budget: stops before spending more than $0.008\n" in result.stderr


def test_the_summarys_cost_shows_four_significant_digits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    write_inputs(tmp_path)
    result = run_cli(["evaluate", "--model", "haiku", "--delay", "0", "--yes"])
    assert result.exit_code == 0, result.output
    cost = only_results(tmp_path).summary["Cost"]
    # Five Haiku calls cost a fraction of a cent: "$0.0004" would hide three digits.
    assert len(cost.removeprefix("$0.").lstrip("0")) == 4, cost
    assert cost == format_usd(float(cost.removeprefix("$")))


def test_generates_budget_line_shows_a_budget_below_a_cent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_anthropic: FakeAnthropicServer
) -> None:
    prepare_workspace(tmp_path, monkeypatch)
    result = run_cli([*generate_arguments(DOCS, count=2), "--yes", "--max-cost", "0.0085"])
    assert "Budget: stops before spending more than $0.0085" in result.stderr
