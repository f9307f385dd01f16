# tallyho v1 compat tests
# Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

# ---- formerly conftest.py ----

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

# ---- formerly test_importer.py ----

from pathlib import Path

import pytest

from tallyho.importer import parse_row, read_csv_rows


def test_parse_row_reads_tags():
    entry = parse_row({"date": "2024-03-01", "account": "expenses:food", "amount": "-3.5",
                       "tags": "groceries;weekly"}, "EUR")
    assert entry.tags == ("groceries", "weekly")
    assert entry.amount.cents == -350


def test_parse_row_requires_amount():
    with pytest.raises(ValueError, match="missing"):
        parse_row({"date": "2024-03-01", "account": "expenses:food"}, "EUR")


def test_read_csv_rows(tmp_path: Path):
    path = tmp_path / "statement.csv"
    path.write_text("date,account,amount\n2024-03-01,income:salary,2500\n", encoding="utf-8")
    assert [e.amount.cents for e in read_csv_rows(path)] == [250000]

# ---- formerly test_ledger.py ----

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

# ---- formerly test_money.py ----

import pytest

from tallyho.money import Money, format_amount, parse_amount


def test_parse_amount_with_cents():
    assert parse_amount("12.34") == Money(1234)


def test_parse_amount_negative_and_thousands():
    assert parse_amount("-1,250.5") == Money(-125050)


def test_format_amount_pads_cents():
    assert format_amount(Money(705, "USD")) == "7.05 USD"


def test_add_rejects_currency_mismatch():
    with pytest.raises(ValueError, match="currency mismatch"):
        Money(1, "EUR") + Money(1, "USD")

# ---- formerly test_report.py ----

from tallyho.report import month_bounds, monthly_summary, render_table


def test_month_bounds_wraps_december():
    start, end = month_bounds(2024, 12)
    assert (start.month, end.year, end.month) == (12, 2025, 1)


def test_monthly_summary_groups_top_level(small_ledger):
    totals = monthly_summary(small_ledger, 2024, 3)
    assert {k: v.cents for k, v in totals.items()} == {"expenses": -94250, "income": 250000}


def test_render_table_header(small_ledger):
    text = render_table(monthly_summary(small_ledger, 2024, 3))
    assert text.splitlines()[0].startswith("account")
