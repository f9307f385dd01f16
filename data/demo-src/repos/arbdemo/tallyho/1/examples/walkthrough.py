# tallyho walkthrough: every module and its tests in one file
# Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

# ---- formerly __init__.py ----

"""tallyho: a tiny ledger."""

from tallyho.entry import Entry
from tallyho.ledger import Ledger
from tallyho.money import Money, parse_amount

__all__ = ["Entry", "Ledger", "Money", "parse_amount"]

# ---- formerly cli.py ----

"""Command line: tallyho report statement.csv --month 2024-03"""

from __future__ import annotations

import argparse
from pathlib import Path

from tallyho.importer import read_csv_rows
from tallyho.ledger import Ledger
from tallyho.report import monthly_summary, render_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tallyho")
    parser.add_argument("statement", type=Path)
    parser.add_argument("--month", required=True, help="YYYY-MM")
    parser.add_argument("--currency", default="EUR")
    args = parser.parse_args(argv)
    ledger = Ledger(args.currency)
    for entry in read_csv_rows(args.statement, args.currency):
        ledger.add_entry(entry)
    year, month = (int(part) for part in args.month.split("-"))
    print(render_table(monthly_summary(ledger, year, month)))
    return 0

# ---- formerly currency.py ----

"""Fixed conversion rates between the currencies tallyho knows."""

from __future__ import annotations

from tallyho.money import Money

RATES_TO_EUR = {"EUR": 1.0, "USD": 0.92, "GBP": 1.17, "CHF": 1.04}


def convert(value: Money, target: str) -> Money:
    """Convert through EUR, rounding half away from zero to whole cents."""
    if target not in RATES_TO_EUR or value.currency not in RATES_TO_EUR:
        raise KeyError(f"unknown currency in {value.currency}->{target}")
    euros = value.cents * RATES_TO_EUR[value.currency]
    cents = euros / RATES_TO_EUR[target]
    rounded = int(cents + 0.5) if cents >= 0 else -int(-cents + 0.5)
    return Money(rounded, target)

# ---- formerly entry.py ----

"""Ledger entries and their validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from tallyho.money import Money


@dataclass(frozen=True)
class Entry:
    day: date
    account: str
    amount: Money
    memo: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)


def validate_entry(entry: Entry) -> None:
    """Reject entries without an account or with a zero amount."""
    if not entry.account.strip():
        raise ValueError("entry has no account")
    if entry.amount.cents == 0:
        raise ValueError(f"entry for {entry.account} has a zero amount")
    if ":" not in entry.account:
        raise ValueError(f"account {entry.account!r} needs a category prefix like 'expenses:'")

# ---- formerly importer.py ----

"""Import bank statements exported as CSV."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

from tallyho.entry import Entry
from tallyho.money import parse_amount

REQUIRED_COLUMNS = ("date", "account", "amount")


def parse_row(row: dict[str, str], currency: str) -> Entry:
    """Turn one CSV row into an Entry; dates are ISO 'YYYY-MM-DD'."""
    missing = [c for c in REQUIRED_COLUMNS if not row.get(c)]
    if missing:
        raise ValueError(f"row is missing {missing}")
    day = date.fromisoformat(row["date"])
    amount = parse_amount(row["amount"], currency)
    tags = tuple(t for t in row.get("tags", "").split(";") if t)
    return Entry(day, row["account"], amount, row.get("memo", ""), tags)


def read_csv_rows(path: Path, currency: str = "EUR") -> list[Entry]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [parse_row(row, currency) for row in csv.DictReader(handle)]

# ---- formerly ledger.py ----

"""The ledger: an ordered list of entries with balances per account."""

from __future__ import annotations

from collections import defaultdict
from datetime import date

from tallyho.entry import Entry, validate_entry
from tallyho.money import Money


class Ledger:
    def __init__(self, currency: str = "EUR") -> None:
        self.currency = currency
        self.entries: list[Entry] = []

    def add_entry(self, entry: Entry) -> None:
        validate_entry(entry)
        if entry.amount.currency != self.currency:
            raise ValueError(f"ledger is in {self.currency}, entry is in {entry.amount.currency}")
        self.entries.append(entry)

    def balance(self, account: str) -> Money:
        total = Money(0, self.currency)
        for entry in self.entries:
            if entry.account == account or entry.account.startswith(account + ":"):
                total = total + entry.amount
        return total

    def balances(self) -> dict[str, Money]:
        sums: dict[str, int] = defaultdict(int)
        for entry in self.entries:
            sums[entry.account] += entry.amount.cents
        return {name: Money(cents, self.currency) for name, cents in sorted(sums.items())}

    def entries_between(self, start: date, end: date) -> list[Entry]:
        return [e for e in self.entries if start <= e.day < end]

# ---- formerly money.py ----

"""Money values in integer cents."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Money:
    cents: int
    currency: str = "EUR"

    def __add__(self, other: Money) -> Money:
        if other.currency != self.currency:
            raise ValueError(f"currency mismatch: {self.currency} vs {other.currency}")
        return Money(self.cents + other.cents, self.currency)

    def __neg__(self) -> Money:
        return Money(-self.cents, self.currency)


def parse_amount(text: str, currency: str = "EUR") -> Money:
    """Parse '12.34' or '-5' into Money; commas are thousands separators."""
    cleaned = text.strip().replace(",", "")
    if "." in cleaned:
        whole, frac = cleaned.split(".", 1)
        frac = (frac + "00")[:2]
    else:
        whole, frac = cleaned, "00"
    sign = -1 if whole.startswith("-") else 1
    cents = abs(int(whole or "0")) * 100 + int(frac)
    return Money(sign * cents, currency)


def format_amount(value: Money) -> str:
    """Render Money as '1234.50 EUR'."""
    sign = "-" if value.cents < 0 else ""
    whole, frac = divmod(abs(value.cents), 100)
    return f"{sign}{whole}.{frac:02d} {value.currency}"

# ---- formerly report.py ----

"""Monthly summaries rendered as plain-text tables."""

from __future__ import annotations

from datetime import date

from tallyho.ledger import Ledger
from tallyho.money import Money, format_amount


def month_bounds(year: int, month: int) -> tuple[date, date]:
    start = date(year, month, 1)
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return start, end


def monthly_summary(ledger: Ledger, year: int, month: int) -> dict[str, Money]:
    start, end = month_bounds(year, month)
    totals: dict[str, Money] = {}
    for entry in ledger.entries_between(start, end):
        top = entry.account.split(":", 1)[0]
        totals[top] = totals.get(top, Money(0, ledger.currency)) + entry.amount
    return dict(sorted(totals.items()))


def render_table(totals: dict[str, Money]) -> str:
    width = max((len(name) for name in totals), default=7)
    lines = [f"{'account'.ljust(width)}  amount"]
    lines += [f"{name.ljust(width)}  {format_amount(value)}" for name, value in totals.items()]
    return "\n".join(lines)

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
