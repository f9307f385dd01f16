"""Monthly budgets: planned limits per top-level account."""

from __future__ import annotations

from dataclasses import dataclass, field

from tallyho.money import Money


@dataclass
class Budget:
    currency: str = "EUR"
    limits: dict[str, Money] = field(default_factory=dict)

    def plan(self, account: str, amount: Money) -> None:
        if amount.cents <= 0:
            raise ValueError(f"budget for {account} must be positive")
        self.limits[account] = amount

    def overspent(self, totals: dict[str, Money]) -> list[str]:
        """Accounts whose spending exceeds their limit (spending is negative cents)."""
        return sorted(
            name for name, limit in self.limits.items()
            if -totals.get(name, Money(0, self.currency)).cents > limit.cents
        )
