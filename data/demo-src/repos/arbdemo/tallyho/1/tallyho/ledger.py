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
