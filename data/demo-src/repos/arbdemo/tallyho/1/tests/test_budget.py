import pytest

from tallyho.budget import Budget
from tallyho.money import Money


def test_plan_rejects_non_positive():
    with pytest.raises(ValueError, match="must be positive"):
        Budget().plan("expenses", Money(0))


def test_overspent_reports_accounts():
    budget = Budget()
    budget.plan("expenses", Money(50000))
    assert budget.overspent({"expenses": Money(-94250)}) == ["expenses"]
