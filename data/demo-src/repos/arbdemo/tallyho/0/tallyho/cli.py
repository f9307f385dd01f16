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
