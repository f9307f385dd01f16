from tallyho.budget import Budget
from tallyho.money import Money
from tallyho.report import month_bounds, monthly_summary, render_budget, render_table


def test_month_bounds_wraps_december():
    start, end = month_bounds(2024, 12)
    assert (start.month, end.year, end.month) == (12, 2025, 1)


def test_monthly_summary_groups_top_level(small_ledger):
    totals = monthly_summary(small_ledger, 2024, 3)
    assert {k: v.cents for k, v in totals.items()} == {"expenses": -94250, "income": 250000}


def test_render_table_header(small_ledger):
    text = render_table(monthly_summary(small_ledger, 2024, 3))
    assert text.splitlines()[0].startswith("account")


def test_render_budget_lists_planned(small_ledger):
    budget = Budget()
    budget.plan("expenses", Money(100000))
    text = render_budget(monthly_summary(small_ledger, 2024, 3), budget)
    assert "expenses" in text.splitlines()[1]
