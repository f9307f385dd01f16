import pytest

from tallyho.money import Money, format_amount, parse_amount, split_evenly


def test_parse_amount_with_cents():
    assert parse_amount("12.34") == Money(1234)


def test_parse_amount_negative_and_thousands():
    assert parse_amount("-1,250.5") == Money(-125050)


def test_format_amount_pads_cents():
    assert format_amount(Money(705, "USD")) == "7.05 USD"


def test_add_rejects_currency_mismatch():
    with pytest.raises(ValueError, match="currency mismatch"):
        Money(1, "EUR") + Money(1, "USD")


def test_split_evenly_spreads_remainder():
    assert split_evenly(Money(100), 3) == [Money(34), Money(33), Money(33)]
