"""Monthly summaries rendered as plain-text tables."""

from __future__ import annotations

from datetime import date

from tallyho.budget import Budget
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


def render_budget(totals: dict[str, Money], budget: Budget) -> str:
    """Render spent versus planned amounts for every budgeted account."""
    lines = ["account  spent  planned"]
    for name, planned in sorted(budget.limits.items()):
        spent = totals.get(name, Money(0, planned.currency))
        lines.append(f"{name}  {format_amount(spent)}  {format_amount(planned)}")
    return "\n".join(lines)
