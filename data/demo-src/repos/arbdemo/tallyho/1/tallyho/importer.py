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
