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


def split_evenly(value: Money, parts: int) -> list[Money]:
    """Split Money into ``parts`` shares whose cents differ by at most one."""
    if parts < 1:
        raise ValueError(f"parts must be at least 1, got {parts}")
    base, extra = divmod(value.cents, parts)
    return [Money(base + (1 if i < extra else 0), value.currency) for i in range(parts)]


def format_amount(value: Money) -> str:
    """Render Money as '1234.50 EUR'."""
    sign = "-" if value.cents < 0 else ""
    whole, frac = divmod(abs(value.cents), 100)
    return f"{sign}{whole}.{frac:02d} {value.currency}"
