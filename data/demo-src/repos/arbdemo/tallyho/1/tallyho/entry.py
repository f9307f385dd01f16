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
