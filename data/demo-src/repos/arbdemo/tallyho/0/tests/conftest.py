from datetime import date

import pytest

from tallyho import Entry, Ledger, Money


@pytest.fixture
def small_ledger() -> Ledger:
    ledger = Ledger()
    ledger.add_entry(Entry(date(2024, 3, 1), "income:salary", Money(250000)))
    ledger.add_entry(Entry(date(2024, 3, 2), "expenses:rent", Money(-90000)))
    ledger.add_entry(Entry(date(2024, 3, 9), "expenses:food", Money(-4250)))
    return ledger
