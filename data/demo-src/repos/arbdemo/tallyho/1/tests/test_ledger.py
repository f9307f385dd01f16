from datetime import date

import pytest

from tallyho import Entry, Money


def test_balance_includes_subaccounts(small_ledger):
    assert small_ledger.balance("expenses") == Money(-94250)


def test_balances_sorted_by_account(small_ledger):
    assert list(small_ledger.balances()) == ["expenses:food", "expenses:rent", "income:salary"]


def test_add_entry_rejects_foreign_currency(small_ledger):
    with pytest.raises(ValueError, match="ledger is in EUR"):
        small_ledger.add_entry(Entry(date(2024, 3, 3), "expenses:taxi", Money(-900, "USD")))


def test_zero_amount_is_rejected(small_ledger):
    with pytest.raises(ValueError, match="zero amount"):
        small_ledger.add_entry(Entry(date(2024, 3, 3), "expenses:misc", Money(0)))
