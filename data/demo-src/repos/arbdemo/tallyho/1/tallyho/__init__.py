"""tallyho: a tiny ledger."""

from tallyho.entry import Entry
from tallyho.ledger import Ledger
from tallyho.money import Money, parse_amount

__all__ = ["Entry", "Ledger", "Money", "parse_amount"]
