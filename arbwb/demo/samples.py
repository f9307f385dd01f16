"""The hand-written demo samples: all four positive tasks plus natural and counterfactual no-gold.

Each :class:`SampleSpec` names its base snapshot by commit index; the builder
turns it into an ARB sample record (spec §2) with a stable id, the commit SHA,
gold spans located by text and gold blocks taken from the built corpus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PY = "arbdemo/tallyho"
GO = "arbdemo/kvcache"
JS = "arbdemo/routekit"
RS = "arbdemo/bucketeer"
TS = "arbdemo/formcheck"


@dataclass(frozen=True)
class SpanSpec:
    """A gold span: ``n_lines`` lines of ``path`` from the first line containing ``needle``."""

    path: str
    needle: str
    n_lines: int
    reason: str


@dataclass(frozen=True)
class SampleSpec:
    """One demo sample before ids, SHAs, spans and blocks are resolved by the builder."""

    key: str  # unique slug; the sample id is stable_id("arbwb-demo", task_type, repo, key)
    task_type: str
    repo: str
    commit: int  # index of the base commit in the repo's history
    query: Mapping[str, Any]
    gold: Mapping[str, Any]
    metadata: Mapping[str, Any]
    spans: tuple[SpanSpec, ...] = ()
    hard_negative_files: tuple[str, ...] = ()
    audit: Mapping[str, str] | None = None
    source_key: str | None = None  # counterfactual: key of the positive the query comes from
    query_provenance: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def _code2test(
    key: str,
    repo: str,
    commit: int,
    *,
    title: str,
    body: str,
    impl: Sequence[str],
    tests: Sequence[str],
    spans: Sequence[SpanSpec],
    supporting: Sequence[str] = (),
    hard_negatives: Sequence[str] = (),
) -> SampleSpec:
    """A PR-level code2test sample (spec §2.2-2.3: gold = ``related_tests``)."""
    n_impl, n_tests = len(impl), len(tests)
    summary = (
        f"{n_impl} implementation files and {n_tests} existing test files changed "
        f"within {n_impl + n_tests} total files."
    )
    return SampleSpec(
        key=key,
        task_type="code2test",
        repo=repo,
        commit=commit,
        query={
            "changed_file_summary": summary,
            "implementation_file_count": n_impl,
            "implementation_files": list(impl),
            "pr_body": body,
            "pr_title": title,
        },
        gold={
            "negative_distractors": list(supporting),
            "related_tests": list(tests),
            "root_cause_files": list(impl),
            "root_cause_symbols": [],
            "supporting_files": list(supporting),
        },
        metadata={
            "evidence": {
                "signals": ["same_pr_changed_tests", "source_test_path_overlap"],
                "source": "pr_level_changed_implementation_and_existing_tests",
            },
            "pr_url": f"https://example.invalid/{repo}/pull/{key}",
        },
        spans=tuple(spans),
        hard_negative_files=tuple(hard_negatives),
    )


def _comment2context(
    key: str,
    repo: str,
    commit: int,
    *,
    path: str,
    line: int,
    hunk: str,
    comment: str,
    title: str,
    must: Mapping[str, Sequence[str]],
    spans: Sequence[SpanSpec],
    tests: Sequence[str] = (),
) -> SampleSpec:
    """A v2 comment2context sample (gold = ``must_context_files`` with evidence)."""
    return SampleSpec(
        key=key,
        task_type="comment2context",
        repo=repo,
        commit=commit,
        query={
            "diff_hunk_context": hunk,
            "given_file": path,
            "line": line,
            "path": path,
            "pr_title": title,
            "review_comment": comment,
        },
        gold={
            "given_files": [path],
            "must_context_files": [{"evidence": list(ev), "path": p} for p, ev in must.items()],
            "negative_distractors": [],
            "related_tests": list(tests),
            "root_cause_files": list(must),
            "supporting_files": [],
        },
        metadata={
            "evidence": {
                "source": "review_comment",
                "signals": sorted({e for ev in must.values() for e in ev}),
            },
            "pr_url": f"https://example.invalid/{repo}/pull/{key}",
        },
        spans=tuple(spans),
        extra={"version": 2},
    )


def _trace2code(
    key: str,
    repo: str,
    commit: int,
    *,
    excerpt: str,
    command: str,
    roots: Sequence[str],
    tests: Sequence[str],
    spans: Sequence[SpanSpec],
    signals: Sequence[str] = ("failure_observed", "assertion_failure"),
    hard_negatives: Sequence[str] = (),
) -> SampleSpec:
    """A reproduced-failure trace2code sample (gold = ``root_cause_files``)."""
    return SampleSpec(
        key=key,
        task_type="trace2code",
        repo=repo,
        commit=commit,
        query={
            "command": command,
            "failure_excerpt": excerpt,
            "run_strategy": "local_reproduction",
            "source_type": "reproduced_failure",
        },
        gold={
            "negative_distractors": [],
            "related_tests": list(tests),
            "root_cause_files": list(roots),
            "root_cause_symbols": [],
            "supporting_files": [],
        },
        metadata={"evidence": {"signals": list(signals), "source": "local_test_reproduction"}},
        spans=tuple(spans),
        hard_negative_files=tuple(hard_negatives),
    )


def _edit2ripple(
    key: str,
    repo: str,
    commit: int,
    *,
    intent: str,
    anchor: str,
    diff: str,
    ripples: Mapping[str, Sequence[str]],
    relation: str,
) -> SampleSpec:
    """An edit2ripple sample (gold = ``files``, the anchor is the given file; no span gold)."""
    evidence = [
        {"additions": 1, "deletions": 1, "is_test": "test" in p, "path": p, "signals": list(s)}
        for p, s in ripples.items()
    ]
    return SampleSpec(
        key=key,
        task_type="edit2ripple",
        repo=repo,
        commit=commit,
        query={"anchor_diff": diff, "anchor_file": anchor, "intent": intent},
        gold={"files": list(ripples), "given_files": [anchor]},
        metadata={
            "changed_files": [anchor, *ripples],
            "gold_evidence": evidence,
            "leakage": {"fatal": False, "fatal_hits": [], "nonfatal": False, "nonfatal_hits": []},
            "ripple_relation": relation,
        },
        audit={
            "notes": "Hand-written demo ripple; gold files use the edited symbol.",
            "verdict": "valid",
        },
    )


def _no_gold(
    key: str,
    repo: str,
    commit: int,
    *,
    source: str,
    reason: str,
    text: str,
    summary: str,
    source_key: str | None = None,
    source_repo: str | None = None,
    source_task: str | None = None,
) -> SampleSpec:
    """An abstention sample: natural (organic) or counterfactual wrong-repository."""
    organic = reason != "counterfactual_wrong_repo"
    metadata: dict[str, Any] = {
        "evidence_summary": summary,
        "evidence_urls": [f"https://example.invalid/{repo}/issues/{key}"],
        "organic": organic,
        "source_url": f"https://example.invalid/{repo}/issues/{key}",
    }
    if not organic:
        metadata |= {
            "pairing_profile": "demo:small-library",
            "source_repo": source_repo,
            "source_task_type": source_task,
        }
    return SampleSpec(
        key=key,
        task_type="abstention",
        repo=repo,
        commit=commit,
        query={"source": source, "text": text},
        gold={"files": [], "no_gold": True, "reason": reason},
        metadata=metadata,
        audit={"notes": summary, "verdict": "valid_no_gold"},
        source_key=source_key,
    )


def _span(path: str, needle: str, n_lines: int, reason: str = "gold region") -> SpanSpec:
    return SpanSpec(path, needle, n_lines, reason)


CODE2TEST: tuple[SampleSpec, ...] = (
    _code2test(
        "py-split-evenly",
        PY,
        0,
        title="Split an amount evenly between participants",
        body="Adds a helper that divides Money into equal shares, spreading leftover cents "
        "over the first shares so the parts always add up to the original amount.",
        impl=["tallyho/money.py"],
        tests=["tests/test_money.py"],
        spans=[
            _span("tests/test_money.py", "def test_parse_amount_with_cents", 2, "neighbour test")
        ],
    ),
    _code2test(
        "py-budget-report",
        PY,
        0,
        title="Budget report next to the monthly summary",
        body="Monthly reports can now show planned versus spent amounts per top-level account.",
        impl=["tallyho/report.py"],
        tests=["tests/test_report.py"],
        spans=[_span("tests/test_report.py", "def test_render_table_header", 3, "table test")],
        hard_negatives=["tallyho/cli.py"],
    ),
    _code2test(
        "py-category-prefix",
        PY,
        0,
        title="Require a category prefix on every account",
        body="Entries like `rent` are ambiguous; validation now asks for `expenses:rent`.",
        impl=["tallyho/entry.py"],
        tests=["tests/test_ledger.py", "tests/conftest.py"],
        spans=[
            _span("tests/test_ledger.py", "def test_zero_amount_is_rejected", 3, "validation test"),
            _span("tests/conftest.py", "def small_ledger", 6, "fixture accounts"),
        ],
    ),
    _code2test(
        "py-import-tags",
        PY,
        0,
        title="Import semicolon-separated tags from bank CSV",
        body="The importer reads an optional tags column and drops empty tags.",
        impl=["tallyho/importer.py"],
        tests=["tests/test_importer.py"],
        spans=[_span("tests/test_importer.py", "def test_parse_row_reads_tags", 5, "tag test")],
    ),
    _code2test(
        "py-overspent-sign",
        PY,
        1,
        title="Treat spending as negative cents when checking budgets",
        body="Overspending compares the absolute value of negative totals with the limit.",
        impl=["tallyho/budget.py"],
        tests=["tests/test_budget.py"],
        spans=[_span("tests/test_budget.py", "def test_overspent_reports_accounts", 4, "check")],
    ),
    _code2test(
        "py-split-negative",
        PY,
        1,
        title="Even splits of refunds",
        body="Refunds are negative; the remainder must go to the first shares as for payments.",
        impl=["tallyho/money.py"],
        tests=["tests/test_money.py"],
        spans=[_span("tests/test_money.py", "def test_split_evenly_spreads_remainder", 2, "split")],
        supporting=["tallyho/currency.py"],
    ),
    _code2test(
        "go-eviction-stats",
        GO,
        0,
        title="Count evictions in cache statistics",
        body="Expose how many entries the LRU pushed out so users can size the cache.",
        impl=["cache.go", "stats.go"],
        tests=["cache_test.go"],
        spans=[_span("cache_test.go", "func TestSetEvictsOldest", 12, "eviction test")],
    ),
    _code2test(
        "go-ttl-deadline",
        GO,
        0,
        title="Expire entries exactly at their deadline",
        body="An entry whose deadline equals the clock's time is stale; purge counts removals.",
        impl=["ttl.go"],
        tests=["ttl_test.go"],
        spans=[_span("ttl_test.go", "func TestEntryExpires", 13, "deadline test")],
        hard_negatives=["internal/clock/clock.go"],
    ),
    _code2test(
        "go-shard-hash",
        GO,
        1,
        title="Pick shards with FNV-1a",
        body="Keys are spread over shards by a 32-bit FNV-1a hash of the key bytes.",
        impl=["shard.go"],
        tests=["shard_test.go"],
        spans=[_span("shard_test.go", "func TestShardedRoundTrip", 9, "round trip")],
    ),
    _code2test(
        "js-optional-params",
        JS,
        0,
        title="Support optional path parameters",
        body="A trailing `?` makes a parameter optional, so `/files/:name?` matches `/files`.",
        impl=["src/match.js"],
        tests=["test/match.test.js"],
        spans=[_span("test/match.test.js", "test('optional parameters may be absent'", 5, "test")],
    ),
    _code2test(
        "js-int-params",
        JS,
        0,
        title="Reject non-integer parameters with 400",
        body="Typed parameters are coerced before the handler runs; bad integers are "
        "a client error.",
        impl=["src/params.js"],
        tests=["test/params.test.js", "test/router.test.js"],
        spans=[
            _span("test/params.test.js", "test('rejects non-integers with 400'", 3, "400 test"),
            _span("test/router.test.js", "test('dispatches to the matching route", 4, "int id"),
        ],
    ),
    _code2test(
        "js-repeated-query",
        JS,
        1,
        title="Repeated query keys become arrays",
        body="`?a=1&a=2` yields `{a: ['1', '2']}` instead of keeping only the last value.",
        impl=["src/query.js"],
        tests=["test/query.test.js"],
        spans=[_span("test/query.test.js", "test('repeated keys become arrays'", 3, "query test")],
    ),
    _code2test(
        "rs-subsecond-refill",
        RS,
        0,
        title="Refill tokens with sub-second precision",
        body="Buckets gained nothing until a whole second had passed, so a 10-per-second "
        "bucket stalled under steady load. Elapsed time is now measured in fractional seconds.",
        impl=["src/bucket.rs"],
        tests=["tests/bucket.rs"],
        spans=[_span("tests/bucket.rs", "fn refills_over_time", 6, "refill test")],
    ),
    _code2test(
        "rs-hours-unit",
        RS,
        0,
        title="Accept hours in rate strings",
        body="`100/2h` failed with an invalid unit error; the duration parser learns `h`.",
        impl=["src/util/duration.rs"],
        tests=["tests/config.rs"],
        spans=[_span("tests/config.rs", "fn parses_per_minute", 4, "unit test")],
    ),
    _code2test(
        "rs-retry-after-ceil",
        RS,
        0,
        title="Round Retry-After up to whole seconds",
        body="A wait of 1.2 s was sent as `Retry-After: 1`, so clients came back too early "
        "and were refused again.",
        impl=["src/headers.rs"],
        tests=["tests/headers.rs"],
        spans=[_span("tests/headers.rs", "fn retry_after_never_zero_while_refused", 3, "rounding")],
    ),
    _code2test(
        "rs-gcra-burst",
        RS,
        1,
        title="GCRA burst tolerance",
        body="The theoretical arrival time may run ahead of now by the burst's emission "
        "intervals before calls are refused.",
        impl=["src/gcra.rs"],
        tests=["tests/gcra.rs"],
        spans=[_span("tests/gcra.rs", "fn allows_the_burst_then_refuses", 6, "burst test")],
    ),
    _code2test(
        "ts-email-idn",
        TS,
        0,
        title="Accept internationalised domain names",
        body="Addresses like `ada@bücher.example` were rejected; the domain check now allows "
        "non-ASCII labels.",
        impl=["src/rules/email.ts"],
        tests=["test/rules.test.ts"],
        spans=[_span("test/rules.test.ts", "test('email accepts plain addresses'", 4, "email")],
    ),
    _code2test(
        "ts-decimal-comma",
        TS,
        0,
        title="Parse numbers typed with a decimal comma",
        body="European users type `3,5`; numeric coercion turns the comma into a point.",
        impl=["src/coerce.ts"],
        tests=["test/coerce.test.ts"],
        spans=[_span("test/coerce.test.ts", "test('decimal commas are accepted'", 4, "comma")],
    ),
    _code2test(
        "ts-date-rule",
        TS,
        1,
        title="A date rule with optional bounds",
        body="Validates ISO days, rejects impossible ones like Feb 30, with exclusive "
        "after/before bounds and English messages.",
        impl=["src/rules/date.ts", "src/messages/en.ts"],
        tests=["test/date.test.ts"],
        spans=[_span("test/date.test.ts", "test('rejects impossible days'", 4, "date test")],
    ),
)

COMMENT2CONTEXT: tuple[SampleSpec, ...] = (
    _comment2context(
        "py-currency-check",
        PY,
        0,
        path="tallyho/ledger.py",
        line=19,
        hunk="    def add_entry(self, entry: Entry) -> None:\n        validate_entry(entry)",
        comment="This currency check duplicates what Money.__add__ already enforces with its "
        "mismatch error. Keep the rule in one place.",
        title="Ledger currency handling",
        must={
            "tallyho/money.py": ["symbol_or_path_overlap", "explicit_behavior_or_api_dependency"]
        },
        spans=[_span("tallyho/money.py", "def __add__", 4, "mismatch rule")],
    ),
    _comment2context(
        "py-tag-test",
        PY,
        0,
        path="tallyho/importer.py",
        line=22,
        hunk='    tags = tuple(t for t in row.get("tags", "").split(";") if t)',
        comment="Please cover trailing semicolons in the tags column with a test.",
        title="Import tags",
        must={
            "tests/test_importer.py": ["review_requests_tests", "behavior_test_for_reviewed_change"]
        },
        spans=[_span("tests/test_importer.py", "def test_parse_row_reads_tags", 5, "tags test")],
    ),
    _comment2context(
        "py-budget-sign",
        PY,
        1,
        path="tallyho/report.py",
        line=38,
        hunk="        spent = totals.get(name, Money(0, planned.currency))",
        comment="Spent amounts are negative here; the overspent check treats them the same way?",
        title="Budget report",
        must={"tallyho/budget.py": ["implementation_context_for_reviewed_change"]},
        spans=[_span("tallyho/budget.py", "def overspent", 6, "sign convention")],
    ),
    _comment2context(
        "py-cli-currency",
        PY,
        0,
        path="tallyho/cli.py",
        line=17,
        hunk='    parser.add_argument("--currency", default="EUR")',
        comment="--currency isn't validated; the rate table already lists the known ones.",
        title="CLI options",
        must={"tallyho/currency.py": ["same_module_context", "modified_after_review_comment"]},
        spans=[_span("tallyho/currency.py", "RATES_TO_EUR = ", 1, "known currencies")],
    ),
    _comment2context(
        "py-use-fixture",
        PY,
        1,
        path="tests/test_budget.py",
        line=12,
        hunk="def test_overspent_reports_accounts():\n    budget = Budget()",
        comment="Use the shared ledger fixture instead of hand-built totals.",
        title="Budget tests",
        must={"tests/conftest.py": ["parallel_template_context", "same_module_context"]},
        spans=[_span("tests/conftest.py", "def small_ledger", 6, "fixture")],
    ),
    _comment2context(
        "go-purge-range",
        GO,
        0,
        path="ttl.go",
        line=24,
        hunk="\tfor key := range c.ttl {\n\t\tif c.expired(key) {\n\t\t\tc.removeLocked(key)",
        comment="removeLocked also unlinks the list element while we range over the deadline "
        "map. Is deleting during range safe for both structures?",
        title="Purge expired entries",
        must={
            "cache.go": ["symbol_or_path_overlap"],
            "lru.go": ["implementation_context_for_reviewed_change"],
        },
        spans=[
            _span("cache.go", "func (c *Cache) removeLocked", 4, "removal"),
            _span("lru.go", "func (l *lruList) remove", 6, "list unlink"),
        ],
    ),
    _comment2context(
        "go-fake-clock",
        GO,
        0,
        path="options.go",
        line=33,
        hunk="func WithClock(c clock.Clock) Option {",
        comment="The fake clock's Advance is not safe for concurrent use; tests that share it "
        "across goroutines will race.",
        title="Injectable clock",
        must={"internal/clock/clock.go": ["review_mentions_context_basename"]},
        spans=[_span("internal/clock/clock.go", "func (f *Fake) Advance", 1, "racy advance")],
    ),
    _comment2context(
        "go-shard-capacity",
        GO,
        1,
        path="shard.go",
        line=17,
        hunk="\tfor i := range shards {\n\t\tshards[i] = New(opts...)",
        comment="Each shard gets the full capacity, so the total is Shards times larger than "
        "configured. Divide it, as WithCapacity promises a bound on entries.",
        title="Sharded cache",
        must={"options.go": ["modified_after_review_comment", "symbol_or_path_overlap"]},
        spans=[_span("options.go", "func WithCapacity", 3, "capacity option")],
    ),
    _comment2context(
        "js-allow-header",
        JS,
        0,
        path="src/router.js",
        line=45,
        hunk="    if (allowed.length) throw new MethodNotAllowedError(allowed);",
        comment="A 405 must carry an Allow header; right now the error only keeps the list.",
        title="Method not allowed",
        must={"src/errors.js": ["modified_after_review_comment", "symbol_or_path_overlap"]},
        spans=[_span("src/errors.js", "export class MethodNotAllowedError", 6, "405 error")],
    ),
    _comment2context(
        "js-next-twice",
        JS,
        0,
        path="src/middleware.js",
        line=4,
        hunk="    if (i <= index) throw new Error('next() called more than once');",
        comment="Can we get a test that calling next twice rejects?",
        title="Middleware chain",
        must={"test/router.test.js": ["review_requests_tests"]},
        spans=[_span("test/router.test.js", "test('404 for unknown paths'", 3, "router tests")],
    ),
    _comment2context(
        "js-plus-decoding",
        JS,
        1,
        path="src/query.js",
        line=7,
        hunk="    const key = decodeURIComponent(rawKey.replace(/\\+/g, ' '));",
        comment="Plus signs are decoded as spaces here but not in path parameters; "
        "matchPath should agree with this.",
        title="Query strings",
        must={"src/match.js": ["same_module_context", "review_mentions_context_basename"]},
        spans=[_span("src/match.js", "export function matchPath", 10, "path decoding")],
    ),
    _comment2context(
        "py-totals-twice",
        PY,
        1,
        path="tallyho/budget.py",
        line=24,
        hunk="            if -totals.get(name, Money(0, self.currency)).cents > limit.cents",
        comment="These per-account totals are summed again on every call; reuse the sums "
        "already kept alongside the entries.",
        title="Budget checks",
        must={"tallyho/ledger.py": ["same_module_context"]},
        spans=[_span("tallyho/ledger.py", "def balances", 5, "running sums")],
    ),
    _comment2context(
        "go-shard-empty-key",
        GO,
        1,
        path="shard.go",
        line=24,
        hunk="\th := fnv.New32a()\n\t_, _ = h.Write([]byte(key))",
        comment="Cover an empty string as well; it must still land on a valid slot.",
        title="Key hashing",
        must={"shard_test.go": ["review_requests_tests", "behavior_test_for_reviewed_change"]},
        spans=[_span("shard_test.go", "func TestShardedRoundTrip", 9, "round trip")],
    ),
    _comment2context(
        "rs-slot-lock",
        RS,
        0,
        path="src/store/sharded.rs",
        line=29,
        hunk="        let slot = &self.shards[self.index(key)];",
        comment="Every hit still serialises on one mutex per slot, and the slot count is fixed "
        "at construction; under heavy fan-in that lock is the bottleneck, not hashing.",
        title="Lock contention",
        must={"src/store/memory.rs": ["same_module_context", "modified_after_review_comment"]},
        spans=[_span("src/store/memory.rs", "let mut buckets = self.buckets.lock();", 5, "lock")],
    ),
    _comment2context(
        "rs-headers-case",
        RS,
        0,
        path="src/headers.rs",
        line=17,
        hunk="pub fn retry_after_seconds(wait: Duration) -> u64 {\n    wait.as_secs()",
        comment="Please pin the rounding with a case just above a whole second, e.g. 1.2 s.",
        title="Retry timing",
        must={"tests/headers.rs": ["review_requests_tests", "behavior_test_for_reviewed_change"]},
        spans=[_span("tests/headers.rs", "fn lists_limit_and_remaining", 5, "header tests")],
    ),
    _comment2context(
        "rs-api-token-basic",
        RS,
        0,
        path="src/policy.rs",
        line=33,
        hunk="    pub fn require(&self, key: Option<&str>) -> Result<String, LimitError> {",
        comment="KeyExtractor::ApiToken silently yields nothing for Basic auth, so require() "
        "reports an unknown key; extract should say why.",
        title="Per-route policies",
        must={"src/key.rs": ["symbol_or_path_overlap", "explicit_behavior_or_api_dependency"]},
        spans=[_span("src/key.rs", "pub fn extract", 14, "token extraction")],
    ),
    _comment2context(
        "rs-measure-first",
        RS,
        0,
        path="src/bucket.rs",
        line=13,
        hunk="    state: Mutex<State>,",
        comment="Measure this under heavy fan-in before merging; a single guard per instance "
        "worries me.",
        title="Locking",
        must={"benches/throughput.rs": ["modified_after_review_comment"]},
        spans=[_span("benches/throughput.rs", "fn contended", 12, "measurement")],
    ),
    _comment2context(
        "ts-bound-agree",
        TS,
        0,
        path="src/rules/length.ts",
        line=8,
        hunk="    if (n >= max) return 'too_long';",
        comment="The upper bound is exclusive here but inclusive next door; users will expect "
        "both to agree.",
        title="Length limits",
        must={"src/rules/range.ts": ["same_module_context"]},
        spans=[_span("src/rules/range.ts", "export function range", 9, "inclusive bounds")],
    ),
    _comment2context(
        "ts-missing-german",
        TS,
        0,
        path="src/messages/de.ts",
        line=4,
        hunk="  too_short: 'Zu kurz.',",
        comment="Several keys have no German text yet; compare with the English table and fill "
        "the gaps.",
        title="Translations",
        must={"src/messages/en.ts": ["same_module_context", "modified_after_review_comment"]},
        spans=[_span("src/messages/en.ts", "length: 'Enter text.',", 1, "untranslated key")],
    ),
    _comment2context(
        "ts-intermediate-case",
        TS,
        0,
        path="src/path.ts",
        line=12,
        hunk="    current = current[part];",
        comment="Add a case where an intermediate object is missing, so this cannot regress.",
        title="Nested reads",
        must={"test/path.test.ts": ["review_requests_tests", "behavior_test_for_reviewed_change"]},
        spans=[_span("test/path.test.ts", "test('reads nested values'", 3, "nested test")],
    ),
    _comment2context(
        "ts-by-path-drops",
        TS,
        0,
        path="src/errors.ts",
        line=13,
        hunk="    return Object.fromEntries(this.issues.map((i) => [i.path, i.message]));",
        comment="byPath keeps only the last issue per field; groupByField in the format module "
        "already groups them properly.",
        title="Error details",
        must={"src/format.ts": ["symbol_or_path_overlap"]},
        spans=[_span("src/format.ts", "export function groupByField", 8, "grouping")],
    ),
)

TRACE2CODE: tuple[SampleSpec, ...] = (
    _trace2code(
        "py-thousands",
        PY,
        0,
        excerpt="FAILED tests/test_money.py::test_parse_amount_negative_and_thousands\n"
        "E   AssertionError: assert Money(cents=125050) == Money(cents=-125050)",
        command="pytest -x tests/test_money.py",
        roots=["tallyho/money.py"],
        tests=["tests/test_money.py"],
        spans=[_span("tallyho/money.py", "def parse_amount", 11, "sign handling")],
        hard_negatives=["tests/test_money.py"],
    ),
    _trace2code(
        "py-prefix-error",
        PY,
        0,
        excerpt='Traceback (most recent call last):\n  File "tallyho/cli.py", line 22, in main\n'
        "    ledger.add_entry(entry)\nValueError: account 'rent' needs a category prefix "
        "like 'expenses:'",
        command="python -m tallyho.cli march.csv --month 2024-03",
        roots=["tallyho/entry.py"],
        tests=["tests/test_ledger.py"],
        spans=[_span("tallyho/entry.py", "def validate_entry", 8, "validation")],
        signals=("failure_observed",),
    ),
    _trace2code(
        "py-unknown-currency",
        PY,
        0,
        excerpt="KeyError: 'unknown currency in USD->JPY'",
        command="pytest tests/",
        roots=["tallyho/currency.py"],
        tests=[],
        spans=[_span("tallyho/currency.py", "def convert", 8, "conversion")],
        signals=("failure_observed", "test_failure"),
    ),
    _trace2code(
        "py-overspent",
        PY,
        1,
        excerpt="FAILED tests/test_budget.py::test_overspent_reports_accounts\n"
        "E   AssertionError: assert [] == ['expenses']",
        command="pytest tests/test_budget.py",
        roots=["tallyho/budget.py"],
        tests=["tests/test_budget.py"],
        spans=[_span("tallyho/budget.py", "def overspent", 6, "comparison")],
    ),
    _trace2code(
        "py-december",
        PY,
        0,
        excerpt="ValueError: month must be in 1..12\n  in monthly_summary(ledger, 2024, 12)",
        command="pytest tests/test_report.py -k december",
        roots=["tallyho/report.py"],
        tests=["tests/test_report.py"],
        spans=[_span("tallyho/report.py", "def month_bounds", 4, "month arithmetic")],
    ),
    _trace2code(
        "go-deadline",
        GO,
        0,
        excerpt="--- FAIL: TestEntryExpires (0.00s)\n"
        "    entry should expire exactly at its deadline",
        command="go test ./... -run TestEntryExpires",
        roots=["ttl.go"],
        tests=["ttl_test.go"],
        spans=[_span("ttl.go", "func (c *Cache) expired", 4, "deadline comparison")],
        signals=("failure_observed", "test_failure"),
    ),
    _trace2code(
        "go-evictions",
        GO,
        0,
        excerpt="--- FAIL: TestSetEvictsOldest (0.00s)\n    Evictions = 0",
        command="go test ./... -run TestSetEvictsOldest",
        roots=["lru.go"],
        tests=["cache_test.go"],
        spans=[_span("lru.go", "func (l *lruList) put", 19, "eviction report")],
    ),
    _trace2code(
        "go-type-assert",
        GO,
        0,
        excerpt="panic: interface conversion: interface {} is nil, not *kvcache.lruItem\n"
        "goroutine 7 [running]:\nkvcache.(*lruList).get(...)",
        command="go test -race ./...",
        roots=["lru.go"],
        tests=["cache_test.go"],
        spans=[_span("lru.go", "func (l *lruList) get", 8, "element access")],
        signals=("failure_observed", "panic_failure"),
    ),
    _trace2code(
        "go-divide-zero",
        GO,
        1,
        excerpt="panic: runtime error: integer divide by zero\nkvcache.(*Sharded).shardFor(...)",
        command="go test ./... -run TestShardedRoundTrip",
        roots=["shard.go", "options.go"],
        tests=["shard_test.go"],
        spans=[
            _span("shard.go", "func (s *Sharded) shardFor", 5, "modulo by shard count"),
            _span("options.go", "func WithShards", 3, "zero shards allowed"),
        ],
        signals=("failure_observed", "panic_failure"),
    ),
    _trace2code(
        "js-unknown-type",
        JS,
        0,
        excerpt="TypeError: unknown parameter type integer for id\n    at coerceParams",
        command="node --test test/",
        roots=["src/params.js"],
        tests=["test/params.test.js"],
        spans=[_span("src/params.js", "export function coerceParams", 10, "type lookup")],
        signals=("failure_observed", "test_failure"),
    ),
    _trace2code(
        "js-optional-miss",
        JS,
        0,
        excerpt="not ok 1 - optional parameters may be absent\n  expected: {}\n  actual: null",
        command="node --test test/match.test.js",
        roots=["src/match.js"],
        tests=["test/match.test.js"],
        spans=[_span("src/match.js", "export function compilePattern", 17, "pattern compile")],
    ),
    _trace2code(
        "js-query-array",
        JS,
        1,
        excerpt="not ok 1 - repeated keys become arrays\n  expected: { a: [ '1', '2' ], b: '' }\n"
        "  actual: { a: '2', b: '' }",
        command="node --test test/query.test.js",
        roots=["src/query.js"],
        tests=["test/query.test.js"],
        spans=[_span("src/query.js", "if (key in query)", 5, "repeated keys")],
    ),
    _trace2code(
        "rs-hours-panic",
        RS,
        0,
        excerpt="thread 'parses_per_hour' panicked at tests/config.rs:21:40:\n"
        'called `Result::unwrap()` on an `Err` value: InvalidUnit("h")',
        command="cargo test --test config",
        roots=["src/util/duration.rs"],
        tests=["tests/config.rs"],
        spans=[_span("src/util/duration.rs", "pub fn parse_duration", 15, "unit table")],
        signals=("failure_observed", "panic_failure"),
    ),
    _trace2code(
        "rs-window-underflow",
        RS,
        0,
        excerpt="thread 'refuses_over_the_limit' panicked at library/core/src/time.rs:1142:31:\n"
        "overflow when subtracting durations\nnote: run with `RUST_BACKTRACE=1`",
        command="cargo test --test window",
        roots=["src/window.rs"],
        tests=["tests/window.rs"],
        spans=[_span("src/window.rs", "fn try_acquire", 14, "retry computation")],
        signals=("failure_observed", "panic_failure"),
    ),
    _trace2code(
        "rs-stalled-bucket",
        RS,
        0,
        excerpt="---- refills_over_time stdout ----\nthread 'refills_over_time' panicked:\n"
        "assertion `left == right` failed\n  left: 0\n right: 1",
        command="cargo test --test bucket",
        roots=["src/bucket.rs"],
        tests=["tests/bucket.rs"],
        spans=[_span("src/bucket.rs", "fn refill", 6, "whole seconds only")],
    ),
    _trace2code(
        "ts-nested-undefined",
        TS,
        0,
        excerpt="FAIL  test/schema.test.ts > validate > nested objects use dotted paths\n"
        "TypeError: Cannot read properties of undefined (reading 'city')",
        command="npx vitest run test/schema.test.ts",
        roots=["src/path.ts"],
        tests=["test/schema.test.ts"],
        spans=[_span("src/path.ts", "export function getIn", 7, "missing guard")],
        signals=("failure_observed", "test_failure"),
    ),
    _trace2code(
        "ts-german-fallback",
        TS,
        0,
        excerpt="AssertionError: expected 'Enter text.' to be 'Bitte Text eingeben.'\n"
        " > test/schema.test.ts:31:52",
        command="npx vitest run -t locale",
        roots=["src/messages/de.ts"],
        tests=["test/schema.test.ts"],
        spans=[_span("src/messages/de.ts", "export const de", 10, "missing key")],
    ),
    _trace2code(
        "ts-too-long",
        TS,
        0,
        excerpt="FAIL  test/rules.test.ts > max is inclusive\n"
        "AssertionError: expected 'too_long' to be undefined",
        command="npx vitest run test/rules.test.ts",
        roots=["src/rules/length.ts"],
        tests=["test/rules.test.ts"],
        spans=[_span("src/rules/length.ts", "if (n >= max)", 1, "off by one")],
    ),
    _trace2code(
        "ts-blank-username",
        TS,
        0,
        excerpt="POST /api/check-username 400 (Bad Request)\n"
        '  sent with username="" although the field was already reported as missing',
        command="npx playwright test signup.spec.ts",
        roots=["src/async.ts"],
        tests=[],
        spans=[_span("src/async.ts", "export async function validateAsync", 7, "runs every rule")],
        signals=("failure_observed",),
    ),
)

EDIT2RIPPLE: tuple[SampleSpec, ...] = (
    _edit2ripple(
        "py-rename-parse",
        PY,
        0,
        intent="Rename the amount parser to parse_money so it matches the Money type.",
        anchor="tallyho/money.py",
        diff='-def parse_amount(text: str, currency: str = "EUR") -> Money:\n'
        '+def parse_money(text: str, currency: str = "EUR") -> Money:',
        ripples={
            "tallyho/importer.py": ["imports_renamed_symbol"],
            "tallyho/__init__.py": ["reexports_renamed_symbol"],
            "tests/test_money.py": ["tests_renamed_symbol"],
        },
        relation="caller_update",
    ),
    _edit2ripple(
        "py-entry-payee",
        PY,
        0,
        intent="Entries gain a required payee so statements can be grouped by counterparty.",
        anchor="tallyho/entry.py",
        diff="     account: str\n+    payee: str\n     amount: Money",
        ripples={
            "tallyho/importer.py": ["constructs_entry"],
            "tests/conftest.py": ["constructs_entry"],
            "tests/test_ledger.py": ["constructs_entry"],
        },
        relation="constructor_update",
    ),
    _edit2ripple(
        "py-budget-planned",
        PY,
        1,
        intent="Rename Budget.limits to Budget.planned.",
        anchor="tallyho/budget.py",
        diff="-    limits: dict[str, Money] = field(default_factory=dict)\n"
        "+    planned: dict[str, Money] = field(default_factory=dict)",
        ripples={"tallyho/report.py": ["reads_renamed_field"]},
        relation="caller_update",
    ),
    _edit2ripple(
        "py-inclusive-end",
        PY,
        0,
        intent="Make the date window of entries_between inclusive of its end day.",
        anchor="tallyho/ledger.py",
        diff="-        return [e for e in self.entries if start <= e.day < end]\n"
        "+        return [e for e in self.entries if start <= e.day <= end]",
        ripples={
            "tallyho/report.py": ["calls_changed_function"],
            "tests/test_report.py": ["asserts_changed_behavior"],
        },
        relation="semantic_update",
    ),
    _edit2ripple(
        "go-max-entries",
        GO,
        0,
        intent="Rename the Capacity option field to MaxEntries.",
        anchor="options.go",
        diff="-\tCapacity   int\n+\tMaxEntries int",
        ripples={"cache.go": ["reads_renamed_field"]},
        relation="caller_update",
    ),
    _edit2ripple(
        "go-clock-since",
        GO,
        0,
        intent="Add Since to the Clock interface and use it for deadline checks.",
        anchor="internal/clock/clock.go",
        diff="type Clock interface {\n \tNow() time.Time\n+\tSince(t time.Time) time.Duration\n }",
        ripples={
            "ttl.go": ["implements_interface_change"],
            "options.go": ["implements_interface_change"],
        },
        relation="interface_update",
    ),
    _edit2ripple(
        "go-stats-merge",
        GO,
        1,
        intent="Add a Merge method to Stats so sharded caches can report one total.",
        anchor="stats.go",
        diff="+// Merge adds other's counters.\n+func (s *Stats) Merge(other Stats) {",
        ripples={"shard.go": ["uses_new_api"]},
        relation="feature_follow_up",
    ),
    _edit2ripple(
        "go-onevict",
        GO,
        0,
        intent="Return the evicted value from the list as well, for an eviction callback.",
        anchor="lru.go",
        diff="-func (l *lruList) put(key string, value any) (string, bool) {\n"
        "+func (l *lruList) put(key string, value any) (string, any, bool) {",
        ripples={"cache.go": ["calls_changed_function"]},
        relation="caller_update",
    ),
    _edit2ripple(
        "js-method-not-allowed",
        JS,
        0,
        intent="Rename MethodNotAllowedError to MethodNotAllowed and add an allow header.",
        anchor="src/errors.js",
        diff="-export class MethodNotAllowedError extends HttpError {\n"
        "+export class MethodNotAllowed extends HttpError {",
        ripples={"src/router.js": ["imports_renamed_symbol"]},
        relation="caller_update",
    ),
    _edit2ripple(
        "js-match-route",
        JS,
        0,
        intent="Rename matchPath to matchRoute everywhere.",
        anchor="src/match.js",
        diff="-export function matchPath(compiled, path) {\n"
        "+export function matchRoute(compiled, path) {",
        ripples={
            "src/router.js": ["imports_renamed_symbol"],
            "src/index.js": ["reexports_renamed_symbol"],
            "test/match.test.js": ["tests_renamed_symbol"],
        },
        relation="caller_update",
    ),
    _edit2ripple(
        "js-query-map",
        JS,
        1,
        intent="Return a Map from the query parser to keep key order and allow any key.",
        anchor="src/query.js",
        diff="-  const query = {};\n+  const query = new Map();",
        ripples={
            "src/router.js": ["calls_changed_function"],
            "test/query.test.js": ["asserts_changed_behavior"],
            "test/router.test.js": ["asserts_changed_behavior"],
        },
        relation="semantic_update",
    ),
    _edit2ripple(
        "rs-per-sec",
        RS,
        0,
        intent="Rename Rate::per_second_of to Rate::per_sec so call sites read shorter.",
        anchor="src/config.rs",
        diff="-    pub fn per_second_of(amount: u32) -> Rate {\n"
        "+    pub fn per_sec(amount: u32) -> Rate {",
        ripples={
            "tests/bucket.rs": ["calls_renamed_function"],
            "examples/burst.rs": ["calls_renamed_function"],
            "benches/throughput.rs": ["calls_renamed_function"],
        },
        relation="caller_update",
    ),
    _edit2ripple(
        "rs-take-remaining",
        RS,
        1,
        intent="Store::take reports the tokens left so responses can fill RateLimit-Remaining.",
        anchor="src/store/mod.rs",
        diff="-    fn take(&self, key: &str, cost: u32) -> Result<(), LimitError>;\n"
        "+    fn take(&self, key: &str, cost: u32) -> Result<u32, LimitError>;",
        ripples={
            "src/store/memory.rs": ["implements_interface_change"],
            "src/store/sharded.rs": ["implements_interface_change"],
        },
        relation="interface_update",
    ),
    _edit2ripple(
        "ts-issue-severity",
        TS,
        0,
        intent="Issues gain a severity so warnings can be shown without blocking submit.",
        anchor="src/validate.ts",
        diff="   code: string;\n+  severity: 'error' | 'warning';\n   message: string;",
        ripples={
            "src/format.ts": ["reads_changed_type"],
            "test/schema.test.ts": ["asserts_changed_behavior"],
        },
        relation="constructor_update",
    ),
    _edit2ripple(
        "ts-read-path",
        TS,
        1,
        intent="Rename getIn to readPath.",
        anchor="src/path.ts",
        diff="-export function getIn(data: unknown, path: string): unknown {\n"
        "+export function readPath(data: unknown, path: string): unknown {",
        ripples={
            "src/validate.ts": ["imports_renamed_symbol"],
            "test/path.test.ts": ["tests_renamed_symbol"],
        },
        relation="caller_update",
    ),
)

NO_GOLD: tuple[SampleSpec, ...] = (
    _no_gold(
        "py-pluggy-warning",
        PY,
        1,
        source="issue",
        reason="upstream_dependency",
        text="Issue title: DeprecationWarning from pluggy on every test run\n"
        "Issue body excerpt: Since upgrading the test runner we see a warning about "
        "hookimpl markers on each run. Nothing in our code registers hooks.",
        summary="Warning raised inside the test runner's plugin manager; no local fix.",
    ),
    _no_gold(
        "py-ci-timeout",
        PY,
        0,
        source="ci_log",
        reason="flaky_ci",
        text="Run pytest -q\nError: The job running on runner hosted-42 has exceeded the "
        "maximum execution time of 10 minutes.\nRe-run succeeded without changes.",
        summary="Runner timeout that passed on re-run.",
    ),
    _no_gold(
        "py-old-python",
        PY,
        1,
        source="issue",
        reason="user_error",
        text="Issue title: SyntaxError on import\nIssue body excerpt: Installing on Python "
        "3.8 fails with `X | None` syntax errors. Closed: the project requires 3.10.",
        summary="Unsupported interpreter version; requirement already declared.",
    ),
    _no_gold(
        "go-proxy-502",
        GO,
        0,
        source="ci_log",
        reason="external_service",
        text="go: downloading golang.org/x/sync v0.7.0\n"
        "go: golang.org/x/sync@v0.7.0: reading https://proxy.golang.org/...: 502 Bad Gateway",
        summary="Module proxy outage during CI.",
    ),
    _no_gold(
        "go-toolchain-race",
        GO,
        1,
        source="issue",
        reason="upstream_dependency",
        text="Issue title: race detector crashes on arm64\nIssue body excerpt: ThreadSanitizer "
        "fails to allocate shadow memory before any test starts; happens on an empty package too.",
        summary="Toolchain race-detector bug, reproducible without this module.",
    ),
    _no_gold(
        "js-timer-flake",
        JS,
        0,
        source="ci_log",
        reason="flaky_ci",
        text="not ok 3 - timing middleware records elapsed time\n  error: 'test timed out "
        "after 30000ms'\nPassed on retry.",
        summary="Slow shared runner; the retry passed.",
    ),
    _no_gold(
        "js-npm-503",
        JS,
        1,
        source="ci_log",
        reason="external_service",
        text="npm ERR! code E503\nnpm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/",
        summary="Package registry outage.",
    ),
    _no_gold(
        "js-require-esm",
        JS,
        0,
        source="issue",
        reason="user_error",
        text="Issue title: Error [ERR_REQUIRE_ESM] when loading the router\nIssue body excerpt: "
        "I use require() in my CommonJS app. Closed: the package is ESM-only; use import().",
        summary="User loaded an ESM-only package with require().",
    ),
    _no_gold(
        "cf-go-from-py",
        GO,
        1,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Pr Title: Split an amount evenly between participants\nPr Body: Adds a helper that "
        "divides an amount into equal shares, spreading leftover cents over the first shares.",
        summary="Counterfactual wrong-repo sample: a ledger change asked of the cache module.",
        source_key="py-split-evenly",
        source_repo=PY,
        source_task="code2test",
    ),
    _no_gold(
        "cf-js-from-go",
        JS,
        0,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Failure Excerpt: --- FAIL: TestEntryExpires (0.00s)\n    entry should expire "
        "exactly at its deadline",
        summary="Counterfactual wrong-repo sample: a cache TTL failure asked of the router.",
        source_key="go-deadline",
        source_repo=GO,
        source_task="trace2code",
    ),
    _no_gold(
        "cf-py-from-js",
        PY,
        0,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Review Comment: A 405 must carry an Allow header; right now the error only keeps "
        "the list.\nPr Title: Method not allowed",
        summary="Counterfactual wrong-repo sample: a router review comment asked of the ledger.",
        source_key="js-allow-header",
        source_repo=JS,
        source_task="comment2context",
    ),
    _no_gold(
        "cf-py-from-go",
        PY,
        1,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Pr Title: Pick shards with FNV-1a\nPr Body: Keys are spread over shards by a "
        "32-bit FNV-1a hash of the key bytes.",
        summary="Counterfactual wrong-repo sample: a sharding change asked of the ledger.",
        source_key="go-shard-hash",
        source_repo=GO,
        source_task="code2test",
    ),
    _no_gold(
        "cf-go-from-js",
        GO,
        0,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Intent: Return a Map from the query parser to keep key order and allow any key.",
        summary="Counterfactual wrong-repo sample: a query-string change asked of the cache.",
        source_key="js-query-map",
        source_repo=JS,
        source_task="edit2ripple",
    ),
    _no_gold(
        "rs-index-download",
        RS,
        0,
        source="ci_log",
        reason="external_service",
        text="Updating crates.io index\nerror: failed to get `parking_lot` as a dependency of "
        "package `bucketeer v0.3.0`\nCaused by: [56] Failure when receiving data from the peer",
        summary="Registry index download failed during CI.",
    ),
    _no_gold(
        "rs-let-else",
        RS,
        1,
        source="issue",
        reason="user_error",
        text="Issue title: expected one of `.`, `;`, found keyword `else`\nIssue body excerpt: "
        "Building with rustc 1.64 fails. Closed: the crate declares rust-version 1.70.",
        summary="Compiler older than the declared minimum version.",
    ),
    _no_gold(
        "ts-worker-exit",
        TS,
        0,
        source="ci_log",
        reason="flaky_ci",
        text="Error: [vitest-pool]: Worker exited unexpectedly\n > ChildProcess.<anonymous>\n"
        "Re-run passed with no changes.",
        summary="Test worker crashed on a loaded runner; the re-run passed.",
    ),
    _no_gold(
        "ts-emit-crash",
        TS,
        1,
        source="issue",
        reason="upstream_dependency",
        text="Issue title: declaration emit crashes with the compiler beta\nIssue body excerpt: "
        "`Debug Failure. False expression` while emitting .d.ts files; reproduces on an empty "
        "project with the same flags.",
        summary="Compiler bug in a beta release, reproducible without this package.",
    ),
    _no_gold(
        "cf-rs-from-ts",
        RS,
        0,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Pr Title: Accept internationalised domain names\nPr Body: Addresses like "
        "`ada@bücher.example` were rejected; the domain check now allows non-ASCII labels.",
        summary="Counterfactual wrong-repo sample: a form-validation change asked of the limiter.",
        source_key="ts-email-idn",
        source_repo=TS,
        source_task="code2test",
    ),
    _no_gold(
        "cf-rs-from-py",
        RS,
        1,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Failure Excerpt: FAILED tests/test_budget.py::test_overspent_reports_accounts\n"
        "E   AssertionError: assert [] == ['expenses']",
        summary="Counterfactual wrong-repo sample: a ledger failure asked of the limiter.",
        source_key="py-overspent",
        source_repo=PY,
        source_task="trace2code",
    ),
    _no_gold(
        "cf-ts-from-rs",
        TS,
        1,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Failure Excerpt: thread 'parses_per_hour' panicked at tests/config.rs:21:40:\n"
        'called `Result::unwrap()` on an `Err` value: InvalidUnit("h")',
        summary="Counterfactual wrong-repo sample: a rate-parser panic asked of the validator.",
        source_key="rs-hours-panic",
        source_repo=RS,
        source_task="trace2code",
    ),
    _no_gold(
        "cf-ts-from-go",
        TS,
        0,
        source="counterfactual_wrong_repo",
        reason="counterfactual_wrong_repo",
        text="Pr Title: Count evictions in cache statistics\nPr Body: Expose how many entries "
        "the LRU pushed out so users can size the cache.",
        summary="Counterfactual wrong-repo sample: a cache change asked of the validator.",
        source_key="go-eviction-stats",
        source_repo=GO,
        source_task="code2test",
    ),
)

DEMO_SAMPLES: tuple[SampleSpec, ...] = (
    *CODE2TEST,
    *COMMENT2CONTEXT,
    *TRACE2CODE,
    *EDIT2RIPPLE,
    *NO_GOLD,
)
