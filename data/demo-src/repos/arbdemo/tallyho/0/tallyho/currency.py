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
