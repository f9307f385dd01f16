"""Source files of the five tiny demo repositories, commit by commit.

``tallyho`` is a Python ledger package, ``kvcache`` a Go cache module and
``routekit`` a JavaScript router (written here); ``bucketeer`` (a Rust rate limiter,
:mod:`arbwb.demo.bucketeer`) and ``formcheck`` (a TypeScript form validator,
:mod:`arbwb.demo.formcheck`) are larger, so some gold files rank past 20. Each has tests and
two commits, so the demo has ten snapshots. The builder turns these into real git repositories.
"""

from __future__ import annotations

from arbwb.demo.bucketeer import BUCKETEER
from arbwb.demo.formcheck import FORMCHECK
from arbwb.demo.model import DemoCommit, DemoRepo, patch

__all__ = ["DEMO_REPOS", "DemoCommit", "DemoRepo"]


# --------------------------------------------------------------------------- tallyho (Python)

_TALLYHO_README = """\
# tallyho

A tiny double-entry ledger used as demo data by arbwb. Amounts are kept in
integer cents; currencies are converted with a fixed rate table.
"""

_TALLYHO_PYPROJECT = """\
[project]
name = "tallyho"
version = "0.1.0"
requires-python = ">=3.10"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

_TALLYHO_INIT = """\
\"\"\"tallyho: a tiny ledger.\"\"\"

from tallyho.entry import Entry
from tallyho.ledger import Ledger
from tallyho.money import Money, parse_amount

__all__ = ["Entry", "Ledger", "Money", "parse_amount"]
"""

_TALLYHO_MONEY_V1 = """\
\"\"\"Money values in integer cents.\"\"\"

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
    \"\"\"Parse '12.34' or '-5' into Money; commas are thousands separators.\"\"\"
    cleaned = text.strip().replace(",", "")
    if "." in cleaned:
        whole, frac = cleaned.split(".", 1)
        frac = (frac + "00")[:2]
    else:
        whole, frac = cleaned, "00"
    sign = -1 if whole.startswith("-") else 1
    cents = abs(int(whole or "0")) * 100 + int(frac)
    return Money(sign * cents, currency)


def format_amount(value: Money) -> str:
    \"\"\"Render Money as '1234.50 EUR'.\"\"\"
    sign = "-" if value.cents < 0 else ""
    whole, frac = divmod(abs(value.cents), 100)
    return f"{sign}{whole}.{frac:02d} {value.currency}"
"""

_TALLYHO_MONEY_V2 = patch(
    _TALLYHO_MONEY_V1,
    """    cents = abs(int(whole or "0")) * 100 + int(frac)
    return Money(sign * cents, currency)
""",
    """    cents = abs(int(whole or "0")) * 100 + int(frac)
    return Money(sign * cents, currency)


def split_evenly(value: Money, parts: int) -> list[Money]:
    \"\"\"Split Money into ``parts`` shares whose cents differ by at most one.\"\"\"
    if parts < 1:
        raise ValueError(f"parts must be at least 1, got {parts}")
    base, extra = divmod(value.cents, parts)
    return [Money(base + (1 if i < extra else 0), value.currency) for i in range(parts)]
""",
)

_TALLYHO_ENTRY = """\
\"\"\"Ledger entries and their validation.\"\"\"

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
    \"\"\"Reject entries without an account or with a zero amount.\"\"\"
    if not entry.account.strip():
        raise ValueError("entry has no account")
    if entry.amount.cents == 0:
        raise ValueError(f"entry for {entry.account} has a zero amount")
    if ":" not in entry.account:
        raise ValueError(f"account {entry.account!r} needs a category prefix like 'expenses:'")
"""

_TALLYHO_LEDGER = """\
\"\"\"The ledger: an ordered list of entries with balances per account.\"\"\"

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
"""

_TALLYHO_IMPORTER = """\
\"\"\"Import bank statements exported as CSV.\"\"\"

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

from tallyho.entry import Entry
from tallyho.money import parse_amount

REQUIRED_COLUMNS = ("date", "account", "amount")


def parse_row(row: dict[str, str], currency: str) -> Entry:
    \"\"\"Turn one CSV row into an Entry; dates are ISO 'YYYY-MM-DD'.\"\"\"
    missing = [c for c in REQUIRED_COLUMNS if not row.get(c)]
    if missing:
        raise ValueError(f"row is missing {missing}")
    day = date.fromisoformat(row["date"])
    amount = parse_amount(row["amount"], currency)
    tags = tuple(t for t in row.get("tags", "").split(";") if t)
    return Entry(day, row["account"], amount, row.get("memo", ""), tags)


def read_csv_rows(path: Path, currency: str = "EUR") -> list[Entry]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [parse_row(row, currency) for row in csv.DictReader(handle)]
"""

_TALLYHO_CURRENCY = """\
\"\"\"Fixed conversion rates between the currencies tallyho knows.\"\"\"

from __future__ import annotations

from tallyho.money import Money

RATES_TO_EUR = {"EUR": 1.0, "USD": 0.92, "GBP": 1.17, "CHF": 1.04}


def convert(value: Money, target: str) -> Money:
    \"\"\"Convert through EUR, rounding half away from zero to whole cents.\"\"\"
    if target not in RATES_TO_EUR or value.currency not in RATES_TO_EUR:
        raise KeyError(f"unknown currency in {value.currency}->{target}")
    euros = value.cents * RATES_TO_EUR[value.currency]
    cents = euros / RATES_TO_EUR[target]
    rounded = int(cents + 0.5) if cents >= 0 else -int(-cents + 0.5)
    return Money(rounded, target)
"""

_TALLYHO_REPORT_V1 = """\
\"\"\"Monthly summaries rendered as plain-text tables.\"\"\"

from __future__ import annotations

from datetime import date

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
    return "\\n".join(lines)
"""

_TALLYHO_REPORT_V2 = (
    patch(
        _TALLYHO_REPORT_V1,
        "from tallyho.ledger import Ledger\n",
        "from tallyho.budget import Budget\nfrom tallyho.ledger import Ledger\n",
    )
    + '''

def render_budget(totals: dict[str, Money], budget: Budget) -> str:
    """Render spent versus planned amounts for every budgeted account."""
    lines = ["account  spent  planned"]
    for name, planned in sorted(budget.limits.items()):
        spent = totals.get(name, Money(0, planned.currency))
        lines.append(f"{name}  {format_amount(spent)}  {format_amount(planned)}")
    return "\\n".join(lines)
'''
)

_TALLYHO_BUDGET = """\
\"\"\"Monthly budgets: planned limits per top-level account.\"\"\"

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
        \"\"\"Accounts whose spending exceeds their limit (spending is negative cents).\"\"\"
        return sorted(
            name for name, limit in self.limits.items()
            if -totals.get(name, Money(0, self.currency)).cents > limit.cents
        )
"""

_TALLYHO_CLI = """\
\"\"\"Command line: tallyho report statement.csv --month 2024-03\"\"\"

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
"""

_TALLYHO_CONFTEST = """\
from datetime import date

import pytest

from tallyho import Entry, Ledger, Money


@pytest.fixture
def small_ledger() -> Ledger:
    ledger = Ledger()
    ledger.add_entry(Entry(date(2024, 3, 1), "income:salary", Money(250000)))
    ledger.add_entry(Entry(date(2024, 3, 2), "expenses:rent", Money(-90000)))
    ledger.add_entry(Entry(date(2024, 3, 9), "expenses:food", Money(-4250)))
    return ledger
"""

_TALLYHO_TEST_MONEY_V1 = """\
import pytest

from tallyho.money import Money, format_amount, parse_amount


def test_parse_amount_with_cents():
    assert parse_amount("12.34") == Money(1234)


def test_parse_amount_negative_and_thousands():
    assert parse_amount("-1,250.5") == Money(-125050)


def test_format_amount_pads_cents():
    assert format_amount(Money(705, "USD")) == "7.05 USD"


def test_add_rejects_currency_mismatch():
    with pytest.raises(ValueError, match="currency mismatch"):
        Money(1, "EUR") + Money(1, "USD")
"""

_TALLYHO_TEST_MONEY_V2 = (
    patch(
        _TALLYHO_TEST_MONEY_V1,
        "from tallyho.money import Money, format_amount, parse_amount\n",
        "from tallyho.money import Money, format_amount, parse_amount, split_evenly\n",
    )
    + """

def test_split_evenly_spreads_remainder():
    assert split_evenly(Money(100), 3) == [Money(34), Money(33), Money(33)]
"""
)

_TALLYHO_TEST_LEDGER = """\
from datetime import date

import pytest

from tallyho import Entry, Money


def test_balance_includes_subaccounts(small_ledger):
    assert small_ledger.balance("expenses") == Money(-94250)


def test_balances_sorted_by_account(small_ledger):
    assert list(small_ledger.balances()) == ["expenses:food", "expenses:rent", "income:salary"]


def test_add_entry_rejects_foreign_currency(small_ledger):
    with pytest.raises(ValueError, match="ledger is in EUR"):
        small_ledger.add_entry(Entry(date(2024, 3, 3), "expenses:taxi", Money(-900, "USD")))


def test_zero_amount_is_rejected(small_ledger):
    with pytest.raises(ValueError, match="zero amount"):
        small_ledger.add_entry(Entry(date(2024, 3, 3), "expenses:misc", Money(0)))
"""

_TALLYHO_TEST_IMPORTER = """\
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
    path.write_text("date,account,amount\\n2024-03-01,income:salary,2500\\n", encoding="utf-8")
    assert [e.amount.cents for e in read_csv_rows(path)] == [250000]
"""

_TALLYHO_TEST_REPORT_V1 = """\
from tallyho.report import month_bounds, monthly_summary, render_table


def test_month_bounds_wraps_december():
    start, end = month_bounds(2024, 12)
    assert (start.month, end.year, end.month) == (12, 2025, 1)


def test_monthly_summary_groups_top_level(small_ledger):
    totals = monthly_summary(small_ledger, 2024, 3)
    assert {k: v.cents for k, v in totals.items()} == {"expenses": -94250, "income": 250000}


def test_render_table_header(small_ledger):
    text = render_table(monthly_summary(small_ledger, 2024, 3))
    assert text.splitlines()[0].startswith("account")
"""

_TALLYHO_TEST_REPORT_V2 = (
    patch(
        _TALLYHO_TEST_REPORT_V1,
        "from tallyho.report import month_bounds, monthly_summary, render_table\n",
        "from tallyho.budget import Budget\nfrom tallyho.money import Money\n"
        "from tallyho.report import month_bounds, monthly_summary, render_budget, render_table\n",
    )
    + """

def test_render_budget_lists_planned(small_ledger):
    budget = Budget()
    budget.plan("expenses", Money(100000))
    text = render_budget(monthly_summary(small_ledger, 2024, 3), budget)
    assert "expenses" in text.splitlines()[1]
"""
)

_TALLYHO_TEST_BUDGET = """\
import pytest

from tallyho.budget import Budget
from tallyho.money import Money


def test_plan_rejects_non_positive():
    with pytest.raises(ValueError, match="must be positive"):
        Budget().plan("expenses", Money(0))


def test_overspent_reports_accounts():
    budget = Budget()
    budget.plan("expenses", Money(50000))
    assert budget.overspent({"expenses": Money(-94250)}) == ["expenses"]
"""

TALLYHO = DemoRepo(
    repo="arbdemo/tallyho",
    language="Python",
    license="MIT",
    commits=(
        DemoCommit(
            "Initial ledger, importer and monthly report",
            "2024-03-01T10:00:00+00:00",
            {
                "README.md": _TALLYHO_README,
                "pyproject.toml": _TALLYHO_PYPROJECT,
                "tallyho/__init__.py": _TALLYHO_INIT,
                "tallyho/money.py": _TALLYHO_MONEY_V1,
                "tallyho/entry.py": _TALLYHO_ENTRY,
                "tallyho/ledger.py": _TALLYHO_LEDGER,
                "tallyho/importer.py": _TALLYHO_IMPORTER,
                "tallyho/currency.py": _TALLYHO_CURRENCY,
                "tallyho/report.py": _TALLYHO_REPORT_V1,
                "tallyho/cli.py": _TALLYHO_CLI,
                "tests/conftest.py": _TALLYHO_CONFTEST,
                "tests/test_money.py": _TALLYHO_TEST_MONEY_V1,
                "tests/test_ledger.py": _TALLYHO_TEST_LEDGER,
                "tests/test_importer.py": _TALLYHO_TEST_IMPORTER,
                "tests/test_report.py": _TALLYHO_TEST_REPORT_V1,
            },
        ),
        DemoCommit(
            "Add budgets, even splits and a budget report",
            "2024-04-02T09:30:00+00:00",
            {
                "tallyho/money.py": _TALLYHO_MONEY_V2,
                "tallyho/budget.py": _TALLYHO_BUDGET,
                "tallyho/report.py": _TALLYHO_REPORT_V2,
                "tests/test_money.py": _TALLYHO_TEST_MONEY_V2,
                "tests/test_report.py": _TALLYHO_TEST_REPORT_V2,
                "tests/test_budget.py": _TALLYHO_TEST_BUDGET,
            },
        ),
    ),
)

# --------------------------------------------------------------------------- kvcache (Go)

_KV_README = """\
# kvcache

An in-memory key/value cache for Go with LRU eviction and per-entry TTLs.
Demo data for arbwb.
"""

_KV_GOMOD = """\
module github.com/arbdemo/kvcache

go 1.22
"""

_KV_CACHE = """\
// Package kvcache is an in-memory cache with LRU eviction and TTLs.
package kvcache

import (
\t"sync"
\t"time"

\t"github.com/arbdemo/kvcache/internal/clock"
)

// Cache stores values by string key.
type Cache struct {
\tmu    sync.Mutex
\tlru   *lruList
\tttl   map[string]time.Time
\topts  Options
\tstats Stats
\tclock clock.Clock
}

// New builds a cache from options.
func New(opts ...Option) *Cache {
\to := defaultOptions()
\tfor _, apply := range opts {
\t\tapply(&o)
\t}
\treturn &Cache{lru: newLRU(o.Capacity), ttl: map[string]time.Time{}, opts: o, clock: o.Clock}
}

// Get returns the value for key and whether it was present and fresh.
func (c *Cache) Get(key string) (any, bool) {
\tc.mu.Lock()
\tdefer c.mu.Unlock()
\tif c.expired(key) {
\t\tc.removeLocked(key)
\t\tc.stats.Misses++
\t\treturn nil, false
\t}
\tvalue, ok := c.lru.get(key)
\tif ok {
\t\tc.stats.Hits++
\t} else {
\t\tc.stats.Misses++
\t}
\treturn value, ok
}

// Set stores value under key, evicting the least recently used entry when full.
func (c *Cache) Set(key string, value any) {
\tc.mu.Lock()
\tdefer c.mu.Unlock()
\tif evicted, ok := c.lru.put(key, value); ok {
\t\tdelete(c.ttl, evicted)
\t\tc.stats.Evictions++
\t}
\tif c.opts.DefaultTTL > 0 {
\t\tc.ttl[key] = c.clock.Now().Add(c.opts.DefaultTTL)
\t}
}

func (c *Cache) removeLocked(key string) {
\tc.lru.remove(key)
\tdelete(c.ttl, key)
}
"""

_KV_LRU = """\
package kvcache

import "container/list"

type lruItem struct {
\tkey   string
\tvalue any
}

type lruList struct {
\tcapacity int
\torder    *list.List
\titems    map[string]*list.Element
}

func newLRU(capacity int) *lruList {
\treturn &lruList{capacity: capacity, order: list.New(), items: map[string]*list.Element{}}
}

func (l *lruList) get(key string) (any, bool) {
\telem, ok := l.items[key]
\tif !ok {
\t\treturn nil, false
\t}
\tl.order.MoveToFront(elem)
\treturn elem.Value.(*lruItem).value, true
}

// put inserts or updates key; it reports the evicted key, if any.
func (l *lruList) put(key string, value any) (string, bool) {
\tif elem, ok := l.items[key]; ok {
\t\telem.Value.(*lruItem).value = value
\t\tl.order.MoveToFront(elem)
\t\treturn "", false
\t}
\tl.items[key] = l.order.PushFront(&lruItem{key: key, value: value})
\tif l.order.Len() <= l.capacity {
\t\treturn "", false
\t}
\toldest := l.order.Back()
\tl.order.Remove(oldest)
\tevicted := oldest.Value.(*lruItem).key
\tdelete(l.items, evicted)
\treturn evicted, true
}

func (l *lruList) remove(key string) {
\tif elem, ok := l.items[key]; ok {
\t\tl.order.Remove(elem)
\t\tdelete(l.items, key)
\t}
}
"""

_KV_TTL = """\
package kvcache

import "time"

// expired reports whether key has a deadline in the past.
func (c *Cache) expired(key string) bool {
\tdeadline, ok := c.ttl[key]
\treturn ok && !c.clock.Now().Before(deadline)
}

// SetWithTTL stores value with its own time to live.
func (c *Cache) SetWithTTL(key string, value any, ttl time.Duration) {
\tc.Set(key, value)
\tc.mu.Lock()
\tdefer c.mu.Unlock()
\tc.ttl[key] = c.clock.Now().Add(ttl)
}

// Purge removes every expired entry and returns how many were removed.
func (c *Cache) Purge() int {
\tc.mu.Lock()
\tdefer c.mu.Unlock()
\tremoved := 0
\tfor key := range c.ttl {
\t\tif c.expired(key) {
\t\t\tc.removeLocked(key)
\t\t\tremoved++
\t\t}
\t}
\treturn removed
}
"""

_KV_STATS = """\
package kvcache

// Stats counts cache traffic.
type Stats struct {
\tHits      uint64
\tMisses    uint64
\tEvictions uint64
}

// HitRatio is hits over lookups, zero before the first lookup.
func (s Stats) HitRatio() float64 {
\ttotal := s.Hits + s.Misses
\tif total == 0 {
\t\treturn 0
\t}
\treturn float64(s.Hits) / float64(total)
}

// Stats returns a copy of the counters.
func (c *Cache) Stats() Stats {
\tc.mu.Lock()
\tdefer c.mu.Unlock()
\treturn c.stats
}
"""

_KV_OPTIONS_V1 = """\
package kvcache

import (
\t"time"

\t"github.com/arbdemo/kvcache/internal/clock"
)

// Options configure a Cache.
type Options struct {
\tCapacity   int
\tDefaultTTL time.Duration
\tClock      clock.Clock
}

// Option mutates Options.
type Option func(*Options)

func defaultOptions() Options {
\treturn Options{Capacity: 128, Clock: clock.System{}}
}

// WithCapacity bounds the number of entries.
func WithCapacity(n int) Option {
\treturn func(o *Options) { o.Capacity = n }
}

// WithDefaultTTL gives every entry a time to live.
func WithDefaultTTL(ttl time.Duration) Option {
\treturn func(o *Options) { o.DefaultTTL = ttl }
}

// WithClock replaces the wall clock, for tests.
func WithClock(c clock.Clock) Option {
\treturn func(o *Options) { o.Clock = c }
}
"""

_KV_OPTIONS_V2 = (
    patch(
        patch(
            _KV_OPTIONS_V1,
            "\tClock      clock.Clock\n}",
            "\tClock      clock.Clock\n\tShards     int\n}",
        ),
        "Options{Capacity: 128, Clock: clock.System{}}",
        "Options{Capacity: 128, Clock: clock.System{}, Shards: 1}",
    )
    + """
// WithShards splits the cache into n independently locked shards.
func WithShards(n int) Option {
\treturn func(o *Options) { o.Shards = n }
}
"""
)

_KV_SHARD = """\
package kvcache

import "hash/fnv"

// Sharded spreads keys over several caches to reduce lock contention.
type Sharded struct {
\tshards []*Cache
}

// NewSharded builds opts.Shards caches that share the other options.
func NewSharded(opts ...Option) *Sharded {
\to := defaultOptions()
\tfor _, apply := range opts {
\t\tapply(&o)
\t}
\tshards := make([]*Cache, o.Shards)
\tfor i := range shards {
\t\tshards[i] = New(opts...)
\t}
\treturn &Sharded{shards: shards}
}

func (s *Sharded) shardFor(key string) *Cache {
\th := fnv.New32a()
\t_, _ = h.Write([]byte(key))
\treturn s.shards[int(h.Sum32())%len(s.shards)]
}

// Get looks key up in its shard.
func (s *Sharded) Get(key string) (any, bool) { return s.shardFor(key).Get(key) }

// Set stores key in its shard.
func (s *Sharded) Set(key string, value any) { s.shardFor(key).Set(key, value) }
"""

_KV_CLOCK = """\
// Package clock abstracts time so tests can move it by hand.
package clock

import "time"

// Clock tells the time.
type Clock interface {
\tNow() time.Time
}

// System is the wall clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// Fake is a manually advanced clock for tests.
type Fake struct {
\tT time.Time
}

// Now returns the fake time.
func (f *Fake) Now() time.Time { return f.T }

// Advance moves the fake clock forward.
func (f *Fake) Advance(d time.Duration) { f.T = f.T.Add(d) }
"""

_KV_CACHE_TEST = """\
package kvcache

import "testing"

func TestGetMissThenHit(t *testing.T) {
\tc := New(WithCapacity(2))
\tif _, ok := c.Get("a"); ok {
\t\tt.Fatal("empty cache returned a value")
\t}
\tc.Set("a", 1)
\tif v, ok := c.Get("a"); !ok || v.(int) != 1 {
\t\tt.Fatalf("Get(a) = %v, %v", v, ok)
\t}
\tif got := c.Stats().HitRatio(); got != 0.5 {
\t\tt.Fatalf("HitRatio = %v, want 0.5", got)
\t}
}

func TestSetEvictsOldest(t *testing.T) {
\tc := New(WithCapacity(2))
\tc.Set("a", 1)
\tc.Set("b", 2)
\tc.Get("a")
\tc.Set("c", 3)
\tif _, ok := c.Get("b"); ok {
\t\tt.Fatal("b should have been evicted")
\t}
\tif c.Stats().Evictions != 1 {
\t\tt.Fatalf("Evictions = %d", c.Stats().Evictions)
\t}
}
"""

_KV_TTL_TEST = """\
package kvcache

import (
\t"testing"
\t"time"

\t"github.com/arbdemo/kvcache/internal/clock"
)

func TestEntryExpires(t *testing.T) {
\tfake := &clock.Fake{T: time.Unix(0, 0)}
\tc := New(WithClock(fake), WithDefaultTTL(time.Minute))
\tc.Set("k", "v")
\tfake.Advance(59 * time.Second)
\tif _, ok := c.Get("k"); !ok {
\t\tt.Fatal("entry expired too early")
\t}
\tfake.Advance(time.Second)
\tif _, ok := c.Get("k"); ok {
\t\tt.Fatal("entry should expire exactly at its deadline")
\t}
}

func TestPurgeCountsRemoved(t *testing.T) {
\tfake := &clock.Fake{T: time.Unix(0, 0)}
\tc := New(WithClock(fake))
\tc.SetWithTTL("a", 1, time.Second)
\tc.SetWithTTL("b", 2, time.Hour)
\tfake.Advance(2 * time.Second)
\tif n := c.Purge(); n != 1 {
\t\tt.Fatalf("Purge() = %d, want 1", n)
\t}
}
"""

_KV_SHARD_TEST = """\
package kvcache

import "testing"

func TestShardedRoundTrip(t *testing.T) {
\ts := NewSharded(WithShards(4), WithCapacity(8))
\tfor _, key := range []string{"alpha", "beta", "gamma", "delta"} {
\t\ts.Set(key, len(key))
\t}
\tif v, ok := s.Get("gamma"); !ok || v.(int) != 5 {
\t\tt.Fatalf("Get(gamma) = %v, %v", v, ok)
\t}
}
"""

_KV_BENCH_MAIN = """\
// Command kvbench measures cache throughput.
package main

import (
\t"flag"
\t"fmt"
\t"strconv"
\t"time"

\t"github.com/arbdemo/kvcache"
)

func main() {
\tn := flag.Int("n", 100000, "operations")
\tcapacity := flag.Int("capacity", 1024, "cache capacity")
\tflag.Parse()
\tc := kvcache.New(kvcache.WithCapacity(*capacity))
\tstart := time.Now()
\tfor i := 0; i < *n; i++ {
\t\tkey := strconv.Itoa(i % (*capacity * 2))
\t\tif _, ok := c.Get(key); !ok {
\t\t\tc.Set(key, i)
\t\t}
\t}
\tfmt.Printf("%d ops in %s, hit ratio %.3f\\n", *n, time.Since(start), c.Stats().HitRatio())
}
"""

KVCACHE = DemoRepo(
    repo="arbdemo/kvcache",
    language="Go",
    license="Apache-2.0",
    commits=(
        DemoCommit(
            "LRU cache with TTLs and stats",
            "2024-02-10T14:00:00+00:00",
            {
                "README.md": _KV_README,
                "go.mod": _KV_GOMOD,
                "cache.go": _KV_CACHE,
                "lru.go": _KV_LRU,
                "ttl.go": _KV_TTL,
                "stats.go": _KV_STATS,
                "options.go": _KV_OPTIONS_V1,
                "internal/clock/clock.go": _KV_CLOCK,
                "cache_test.go": _KV_CACHE_TEST,
                "ttl_test.go": _KV_TTL_TEST,
                "cmd/kvbench/main.go": _KV_BENCH_MAIN,
            },
        ),
        DemoCommit(
            "Add sharded cache",
            "2024-03-15T08:45:00+00:00",
            {
                "options.go": _KV_OPTIONS_V2,
                "shard.go": _KV_SHARD,
                "shard_test.go": _KV_SHARD_TEST,
            },
        ),
    ),
)

# --------------------------------------------------------------------------- routekit (JavaScript)

_RK_README = """\
# routekit

A small URL router for Node.js with path parameters and middleware.
Demo data for arbwb.
"""

_RK_PACKAGE = """\
{
  "name": "routekit",
  "version": "0.3.0",
  "type": "module",
  "main": "src/index.js",
  "scripts": { "test": "node --test test/" }
}
"""

_RK_INDEX = """\
export { Router } from './router.js';
export { compilePattern, matchPath } from './match.js';
export { HttpError, NotFoundError } from './errors.js';
"""

_RK_ROUTER_V1 = """\
import { compilePattern, matchPath } from './match.js';
import { coerceParams } from './params.js';
import { runMiddleware } from './middleware.js';
import { NotFoundError, MethodNotAllowedError } from './errors.js';

export class Router {
  constructor() {
    this.routes = [];
    this.middleware = [];
  }

  use(fn) {
    this.middleware.push(fn);
    return this;
  }

  add(method, pattern, handler, schema = {}) {
    const compiled = compilePattern(pattern);
    this.routes.push({ method: method.toUpperCase(), compiled, handler, schema });
    return this;
  }

  get(pattern, handler, schema) {
    return this.add('GET', pattern, handler, schema);
  }

  post(pattern, handler, schema) {
    return this.add('POST', pattern, handler, schema);
  }

  async handle(request) {
    const allowed = [];
    for (const route of this.routes) {
      const raw = matchPath(route.compiled, request.path);
      if (!raw) continue;
      if (route.method !== request.method) {
        allowed.push(route.method);
        continue;
      }
      const params = coerceParams(raw, route.schema);
      const context = { request, params, state: {} };
      return runMiddleware(this.middleware, context, () => route.handler(context));
    }
    if (allowed.length) throw new MethodNotAllowedError(allowed);
    throw new NotFoundError(request.path);
  }
}
"""

_RK_ROUTER_V2 = patch(
    patch(
        _RK_ROUTER_V1,
        "import { coerceParams } from './params.js';\n",
        "import { coerceParams } from './params.js';\nimport { parseQuery } from './query.js';\n",
    ),
    "const context = { request, params, state: {} };",
    "const query = parseQuery(request.search || '');\n"
    "      const context = { request, params, query, state: {} };",
)

_RK_MATCH = """\
const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)(\\?)?$/;

export function compilePattern(pattern) {
  const segments = pattern.split('/').filter(Boolean);
  const keys = [];
  const parts = segments.map((segment) => {
    if (segment === '*') {
      keys.push({ name: 'wildcard', optional: false });
      return '(.*)';
    }
    const param = PARAM.exec(segment);
    if (!param) return escapeSegment(segment);
    keys.push({ name: param[1], optional: Boolean(param[2]) });
    return param[2] ? '(?:/([^/]+))?' : '/([^/]+)';
  });
  const joined = parts.map((p) => (p.startsWith('(?:') || p.startsWith('/') ? p : '/' + p));
  const source = joined.join('');
  return { pattern, keys, regex: new RegExp('^' + (source || '/') + '/?$') };
}

export function escapeSegment(segment) {
  return segment.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&');
}

export function matchPath(compiled, path) {
  const found = compiled.regex.exec(path);
  if (!found) return null;
  const params = {};
  compiled.keys.forEach((key, i) => {
    const value = found[i + 1];
    if (value !== undefined) params[key.name] = decodeURIComponent(value);
  });
  return params;
}
"""

_RK_PARAMS = """\
import { HttpError } from './errors.js';

const COERCE = {
  int: (value) => {
    if (!/^-?\\d+$/.test(value)) throw new HttpError(400, `expected an integer, got ${value}`);
    return Number.parseInt(value, 10);
  },
  bool: (value) => value === 'true' || value === '1',
  string: (value) => value,
};

export function coerceParams(raw, schema) {
  const params = {};
  for (const [name, value] of Object.entries(raw)) {
    const type = schema[name] || 'string';
    const coerce = COERCE[type];
    if (!coerce) throw new TypeError(`unknown parameter type ${type} for ${name}`);
    params[name] = coerce(value);
  }
  return params;
}
"""

_RK_MIDDLEWARE = """\
export async function runMiddleware(stack, context, last) {
  let index = -1;
  async function dispatch(i) {
    if (i <= index) throw new Error('next() called more than once');
    index = i;
    const fn = i === stack.length ? last : stack[i];
    return fn(context, () => dispatch(i + 1));
  }
  return dispatch(0);
}

export function timing(clock = () => Date.now()) {
  return async (context, next) => {
    const started = clock();
    const result = await next();
    context.state.elapsedMs = clock() - started;
    return result;
  };
}
"""

_RK_ERRORS = """\
export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export class NotFoundError extends HttpError {
  constructor(path) {
    super(404, `no route for ${path}`);
  }
}

export class MethodNotAllowedError extends HttpError {
  constructor(allowed) {
    super(405, `method not allowed; allowed: ${allowed.join(', ')}`);
    this.allowed = allowed;
  }
}
"""

_RK_QUERY = """\
export function parseQuery(search) {
  const text = search.startsWith('?') ? search.slice(1) : search;
  const query = {};
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const [rawKey, rawValue = ''] = pair.split('=');
    const key = decodeURIComponent(rawKey.replace(/\\+/g, ' '));
    const value = decodeURIComponent(rawValue.replace(/\\+/g, ' '));
    if (key in query) {
      query[key] = [].concat(query[key], value);
    } else {
      query[key] = value;
    }
  }
  return query;
}
"""

_RK_ROUTER_TEST = """\
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from '../src/index.js';

test('dispatches to the matching route with params', async () => {
  const router = new Router().get('/users/:id', ({ params }) => params.id, { id: 'int' });
  assert.equal(await router.handle({ method: 'GET', path: '/users/42' }), 42);
});

test('405 lists allowed methods', async () => {
  const router = new Router().post('/items', () => 'ok');
  await assert.rejects(router.handle({ method: 'GET', path: '/items' }), { status: 405 });
});

test('404 for unknown paths', async () => {
  await assert.rejects(new Router().handle({ method: 'GET', path: '/nope' }), { status: 404 });
});
"""

_RK_ROUTER_TEST_V2 = (
    _RK_ROUTER_TEST
    + """
test('exposes parsed query strings', async () => {
  const router = new Router().get('/search', ({ query }) => query.q);
  assert.equal(await router.handle({ method: 'GET', path: '/search', search: '?q=a+b' }), 'a b');
});
"""
)

_RK_MATCH_TEST = """\
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePattern, matchPath } from '../src/match.js';

test('optional parameters may be absent', () => {
  const compiled = compilePattern('/files/:name?');
  assert.deepEqual(matchPath(compiled, '/files'), {});
  assert.deepEqual(matchPath(compiled, '/files/a.txt'), { name: 'a.txt' });
});

test('percent-encoded segments are decoded', () => {
  assert.deepEqual(matchPath(compilePattern('/tags/:tag'), '/tags/c%2B%2B'), { tag: 'c++' });
});

test('wildcard captures the rest', () => {
  assert.deepEqual(matchPath(compilePattern('/static/*'), '/static/css/site.css'), {
    wildcard: 'css/site.css',
  });
});
"""

_RK_PARAMS_TEST = """\
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coerceParams } from '../src/params.js';

test('coerces integers and booleans', () => {
  const params = coerceParams({ n: '7', on: 'true' }, { n: 'int', on: 'bool' });
  assert.deepEqual(params, { n: 7, on: true });
});

test('rejects non-integers with 400', () => {
  assert.throws(() => coerceParams({ n: 'x' }, { n: 'int' }), { status: 400 });
});
"""

_RK_QUERY_TEST = """\
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery } from '../src/query.js';

test('repeated keys become arrays', () => {
  assert.deepEqual(parseQuery('?a=1&a=2&b='), { a: ['1', '2'], b: '' });
});
"""

ROUTEKIT = DemoRepo(
    repo="arbdemo/routekit",
    language="JavaScript",
    license="MIT",
    commits=(
        DemoCommit(
            "Router with typed params, middleware and HTTP errors",
            "2024-01-20T16:20:00+00:00",
            {
                "README.md": _RK_README,
                "package.json": _RK_PACKAGE,
                "src/index.js": _RK_INDEX,
                "src/router.js": _RK_ROUTER_V1,
                "src/match.js": _RK_MATCH,
                "src/params.js": _RK_PARAMS,
                "src/middleware.js": _RK_MIDDLEWARE,
                "src/errors.js": _RK_ERRORS,
                "test/router.test.js": _RK_ROUTER_TEST,
                "test/match.test.js": _RK_MATCH_TEST,
                "test/params.test.js": _RK_PARAMS_TEST,
            },
        ),
        DemoCommit(
            "Parse query strings into the handler context",
            "2024-02-28T11:05:00+00:00",
            {
                "src/router.js": _RK_ROUTER_V2,
                "src/query.js": _RK_QUERY,
                "test/router.test.js": _RK_ROUTER_TEST_V2,
                "test/query.test.js": _RK_QUERY_TEST,
            },
        ),
    ),
)

DEMO_REPOS: tuple[DemoRepo, ...] = (TALLYHO, KVCACHE, ROUTEKIT, BUCKETEER, FORMCHECK)
