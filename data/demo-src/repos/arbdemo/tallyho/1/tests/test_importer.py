from pathlib import Path

import pytest

from tallyho.importer import parse_row, read_csv_rows


def test_parse_row_reads_tags():
    entry = parse_row({"date": "2024-03-01", "account": "expenses:food", "amount": "-3.5",
                       "tags": "groceries;weekly"}, "EUR")
    assert entry.tags == ("groceries", "weekly")
    assert entry.amount.cents == -350


def test_parse_row_requires_amount():
    with pytest.raises(ValueError, match="missing"):
        parse_row({"date": "2024-03-01", "account": "expenses:food"}, "EUR")


def test_read_csv_rows(tmp_path: Path):
    path = tmp_path / "statement.csv"
    path.write_text("date,account,amount\n2024-03-01,income:salary,2500\n", encoding="utf-8")
    assert [e.amount.cents for e in read_csv_rows(path)] == [250000]
