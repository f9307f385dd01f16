// bucketeer walkthrough: every module and its tests in one file
// Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

// ---- formerly backoff.rs ----

use std::time::Duration;

/// Exponential backoff with a ceiling, for clients that were refused.
pub struct Backoff {
    base: Duration,
    ceiling: Duration,
    attempt: u32,
}

impl Backoff {
    pub fn new(base: Duration, ceiling: Duration) -> Self {
        Backoff { base, ceiling, attempt: 0 }
    }

    pub fn next_delay(&mut self) -> Duration {
        let factor = 1u32.checked_shl(self.attempt).unwrap_or(u32::MAX);
        self.attempt += 1;
        self.base.saturating_mul(factor).min(self.ceiling)
    }

    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}

// ---- formerly bucket.rs ----

use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::config::Rate;
use crate::error::LimitError;
use crate::Limiter;

/// Classic token bucket: `capacity` tokens, refilled continuously at `rate`.
pub struct TokenBucket {
    rate: Rate,
    capacity: u32,
    state: Mutex<State>,
}

struct State {
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    pub fn new(rate: Rate, capacity: u32) -> Self {
        let state = State { tokens: capacity as f64, last: Instant::now() };
        TokenBucket { rate, capacity, state: Mutex::new(state) }
    }

    fn refill(&self, state: &mut State, now: Instant) {
        let elapsed = now.duration_since(state.last).as_secs();
        let added = elapsed as f64 * self.rate.per_second();
        state.tokens = (state.tokens + added).min(self.capacity as f64);
        state.last = now;
    }

    pub fn available(&self) -> u32 {
        let mut state = self.state.lock();
        self.refill(&mut state, Instant::now());
        state.tokens as u32
    }
}

impl Limiter for TokenBucket {
    fn try_acquire(&self, cost: u32) -> Result<(), LimitError> {
        let mut state = self.state.lock();
        self.refill(&mut state, Instant::now());
        if state.tokens < cost as f64 {
            let missing = cost as f64 - state.tokens;
            let wait = Duration::from_secs_f64(missing / self.rate.per_second());
            return Err(LimitError::Exhausted { retry_after: wait });
        }
        state.tokens -= cost as f64;
        Ok(())
    }
}

// ---- formerly clock.rs ----

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where limiters read the time; tests swap in a manual one.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that only moves when told to.
pub struct ManualClock {
    origin: Instant,
    offset_nanos: AtomicU64,
}

impl ManualClock {
    pub fn new() -> Self {
        ManualClock { origin: Instant::now(), offset_nanos: AtomicU64::new(0) }
    }

    pub fn advance(&self, by: Duration) {
        self.offset_nanos.fetch_add(by.as_nanos() as u64, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.origin + Duration::from_nanos(self.offset_nanos.load(Ordering::Relaxed))
    }
}

// ---- formerly config.rs ----

use std::str::FromStr;
use std::time::Duration;

use crate::error::LimitError;
use crate::util::duration::parse_duration;

/// `amount` events per `period`, written like `10/s` or `600/1m`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub amount: u32,
    pub period: Duration,
}

impl Rate {
    pub fn per_second(self) -> f64 {
        self.amount as f64 / self.period.as_secs_f64()
    }

    pub fn per_second_of(amount: u32) -> Rate {
        Rate { amount, period: Duration::from_secs(1) }
    }
}

impl FromStr for Rate {
    type Err = LimitError;

    fn from_str(text: &str) -> Result<Rate, LimitError> {
        let (amount, period) = text
            .split_once('/')
            .ok_or_else(|| LimitError::InvalidRate(text.to_string()))?;
        let amount: u32 = amount
            .trim()
            .parse()
            .map_err(|_| LimitError::InvalidRate(text.to_string()))?;
        let period = parse_duration(period.trim())?;
        Ok(Rate { amount, period })
    }
}

// ---- formerly error.rs ----

use std::fmt;
use std::time::Duration;

/// Why a request was refused or a configuration rejected.
#[derive(Debug, Clone, PartialEq)]
pub enum LimitError {
    Exhausted { retry_after: Duration },
    InvalidRate(String),
    InvalidUnit(String),
    UnknownKey(String),
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::Exhausted { retry_after } => {
                write!(f, "exhausted, retry in {retry_after:?}")
            }
            LimitError::InvalidRate(s) => write!(f, "invalid rate {s:?}"),
            LimitError::InvalidUnit(s) => write!(f, "invalid unit {s:?}"),
            LimitError::UnknownKey(s) => write!(f, "no quota for key {s:?}"),
        }
    }
}

impl std::error::Error for LimitError {}

// ---- formerly headers.rs ----

use std::time::Duration;

/// `RateLimit-Limit`, `RateLimit-Remaining` and `Retry-After` values for a response.
pub fn rate_limit_headers(
    limit: u32,
    remaining: u32,
    retry: Option<Duration>,
) -> Vec<(String, String)> {
    let mut out = vec![
        ("RateLimit-Limit".to_string(), limit.to_string()),
        ("RateLimit-Remaining".to_string(), remaining.to_string()),
    ];
    if let Some(wait) = retry {
        out.push(("Retry-After".to_string(), retry_after_seconds(wait).to_string()));
    }
    out
}

/// Whole seconds a client should wait.
pub fn retry_after_seconds(wait: Duration) -> u64 {
    wait.as_secs()
}

// ---- formerly key.rs ----

/// Which part of a request identifies the caller.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyExtractor {
    ClientIp,
    Header(String),
    ApiToken,
}

impl KeyExtractor {
    pub fn extract<'a>(&self, ip: &'a str, headers: &'a [(String, String)]) -> Option<&'a str> {
        match self {
            KeyExtractor::ClientIp => Some(ip),
            KeyExtractor::Header(name) => headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str()),
            KeyExtractor::ApiToken => headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("authorization"))
                .and_then(|(_, v)| v.strip_prefix("Bearer ")),
        }
    }
}

// ---- formerly lib.rs ----

//! bucketeer: token buckets, sliding windows and per-key quotas.

pub mod backoff;
pub mod bucket;
pub mod clock;
pub mod config;
pub mod error;
pub mod headers;
pub mod key;
pub mod metrics;
pub mod policy;
pub mod quota;
pub mod store;
pub mod util;
pub mod window;

pub use bucket::TokenBucket;
pub use config::Rate;
pub use error::LimitError;
pub use window::SlidingWindow;

/// Anything that can admit or refuse `cost` units of work now.
pub trait Limiter {
    fn try_acquire(&self, cost: u32) -> Result<(), LimitError>;
}

// ---- formerly metrics.rs ----

use std::sync::atomic::{AtomicU64, Ordering};

/// Admitted and refused counters, readable while limiters run.
#[derive(Default)]
pub struct Counters {
    admitted: AtomicU64,
    refused: AtomicU64,
}

impl Counters {
    pub fn record(&self, admitted: bool) {
        let counter = if admitted { &self.admitted } else { &self.refused };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> (u64, u64) {
        (self.admitted.load(Ordering::Relaxed), self.refused.load(Ordering::Relaxed))
    }

    pub fn refusal_ratio(&self) -> f64 {
        let (ok, no) = self.snapshot();
        if ok + no == 0 { 0.0 } else { no as f64 / (ok + no) as f64 }
    }
}

// ---- formerly policy.rs ----

use std::collections::HashMap;

use crate::config::Rate;
use crate::error::LimitError;
use crate::key::KeyExtractor;

/// Per-route rates with a default, keyed by what the extractor pulls from a request.
pub struct Policy {
    default: Rate,
    routes: HashMap<String, Rate>,
    pub extractor: KeyExtractor,
}

impl Policy {
    pub fn new(default: Rate) -> Self {
        Policy { default, routes: HashMap::new(), extractor: KeyExtractor::ClientIp }
    }

    pub fn route(mut self, prefix: &str, rate: Rate) -> Self {
        self.routes.insert(prefix.to_string(), rate);
        self
    }

    pub fn rate_for(&self, path: &str) -> Rate {
        self.routes
            .iter()
            .filter(|(prefix, _)| path.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, rate)| *rate)
            .unwrap_or(self.default)
    }

    pub fn require(&self, key: Option<&str>) -> Result<String, LimitError> {
        key.map(str::to_string).ok_or_else(|| LimitError::UnknownKey(String::new()))
    }
}

// ---- formerly quota.rs ----

use std::collections::HashMap;

use crate::error::LimitError;

/// Monthly allowances per plan, consumed by API calls.
pub struct Quota {
    plans: HashMap<String, u64>,
    used: HashMap<String, u64>,
}

impl Quota {
    pub fn new(plans: HashMap<String, u64>) -> Self {
        Quota { plans, used: HashMap::new() }
    }

    pub fn consume(&mut self, plan: &str, account: &str, calls: u64) -> Result<u64, LimitError> {
        let allowance = *self.plans.get(plan).ok_or_else(|| LimitError::UnknownKey(plan.into()))?;
        let used = self.used.entry(account.to_string()).or_insert(0);
        if *used + calls > allowance {
            return Err(LimitError::InvalidRate(format!("{account} is over its {plan} plan")));
        }
        *used += calls;
        Ok(allowance - *used)
    }
}

// ---- formerly memory.rs ----

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::bucket::TokenBucket;
use crate::config::Rate;
use crate::error::LimitError;
use crate::store::Store;
use crate::Limiter;

/// One map of buckets behind one lock.
pub struct MemoryStore {
    rate: Rate,
    burst: u32,
    buckets: Mutex<HashMap<String, TokenBucket>>,
}

impl MemoryStore {
    pub fn new(rate: Rate, burst: u32) -> Self {
        MemoryStore { rate, burst, buckets: Mutex::new(HashMap::new()) }
    }
}

impl Store for MemoryStore {
    fn take(&self, key: &str, cost: u32) -> Result<(), LimitError> {
        let mut buckets = self.buckets.lock();
        let bucket = buckets
            .entry(key.to_string())
            .or_insert_with(|| TokenBucket::new(self.rate, self.burst));
        bucket.try_acquire(cost)
    }

    fn len(&self) -> usize {
        self.buckets.lock().len()
    }
}

// ---- formerly mod.rs ----

//! Where per-key limiter state lives.

pub mod memory;
pub mod sharded;

use crate::error::LimitError;

/// A keyed collection of limiters.
pub trait Store: Send + Sync {
    fn take(&self, key: &str, cost: u32) -> Result<(), LimitError>;
    fn len(&self) -> usize;
}

// ---- formerly sharded.rs ----

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use crate::config::Rate;
use crate::error::LimitError;
use crate::store::memory::MemoryStore;
use crate::store::Store;

/// Spreads keys over several independent stores to cut lock contention.
pub struct ShardedStore {
    shards: Vec<MemoryStore>,
}

impl ShardedStore {
    pub fn new(rate: Rate, burst: u32, count: usize) -> Self {
        let shards = (0..count).map(|_| MemoryStore::new(rate, burst)).collect();
        ShardedStore { shards }
    }

    fn index(&self, key: &str) -> usize {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        (hasher.finish() as usize) % self.shards.len()
    }
}

impl Store for ShardedStore {
    fn take(&self, key: &str, cost: u32) -> Result<(), LimitError> {
        let slot = &self.shards[self.index(key)];
        slot.take(key, cost)
    }

    fn len(&self) -> usize {
        self.shards.iter().map(Store::len).sum()
    }
}

// ---- formerly duration.rs ----

use std::time::Duration;

use crate::error::LimitError;

/// `s`, `1m`, `2h` or `500ms` as a Duration; a bare unit means one of it.
pub fn parse_duration(text: &str) -> Result<Duration, LimitError> {
    let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = if digits.is_empty() {
        1
    } else {
        digits.parse().map_err(|_| LimitError::InvalidUnit(text.to_string()))?
    };
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(60 * n)),
        _ => Err(LimitError::InvalidUnit(unit.to_string())),
    }
}

// ---- formerly mod.rs ----

pub mod duration;

// ---- formerly window.rs ----

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::error::LimitError;
use crate::Limiter;

/// Counts events in the last `span`; refuses once `limit` is reached.
pub struct SlidingWindow {
    limit: u32,
    span: Duration,
    events: Mutex<VecDeque<Instant>>,
}

impl SlidingWindow {
    pub fn new(limit: u32, span: Duration) -> Self {
        SlidingWindow { limit, span, events: Mutex::new(VecDeque::new()) }
    }

    fn evict(&self, events: &mut VecDeque<Instant>, now: Instant) {
        while let Some(first) = events.front() {
            if now - *first > self.span {
                events.pop_front();
            } else {
                break;
            }
        }
    }
}

impl Limiter for SlidingWindow {
    fn try_acquire(&self, cost: u32) -> Result<(), LimitError> {
        let now = Instant::now();
        let mut events = self.events.lock();
        self.evict(&mut events, now);
        if events.len() as u32 + cost > self.limit {
            let oldest = *events.front().expect("window is full");
            return Err(LimitError::Exhausted { retry_after: self.span - (now - oldest) });
        }
        for _ in 0..cost {
            events.push_back(now);
        }
        Ok(())
    }
}

// ---- formerly bucket.rs ----

use std::time::Duration;

use bucketeer::{Limiter, Rate, TokenBucket};

#[test]
fn starts_full_and_drains() {
    let bucket = TokenBucket::new(Rate::per_second_of(1), 3);
    for _ in 0..3 {
        assert!(bucket.try_acquire(1).is_ok());
    }
    assert!(bucket.try_acquire(1).is_err());
}

#[test]
fn refills_over_time() {
    let bucket = TokenBucket::new(Rate::per_second_of(10), 1);
    assert!(bucket.try_acquire(1).is_ok());
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!(bucket.available(), 1);
}

// ---- formerly config.rs ----

use std::time::Duration;

use bucketeer::Rate;

#[test]
fn parses_per_second() {
    let rate: Rate = "10/s".parse().unwrap();
    assert_eq!(rate.period, Duration::from_secs(1));
    assert_eq!(rate.amount, 10);
}

#[test]
fn parses_per_minute() {
    let rate: Rate = "600/1m".parse().unwrap();
    assert_eq!(rate.per_second(), 10.0);
}

// ---- formerly headers.rs ----

use std::time::Duration;

use bucketeer::headers::{rate_limit_headers, retry_after_seconds};

#[test]
fn lists_limit_and_remaining() {
    let headers = rate_limit_headers(10, 4, None);
    assert_eq!(headers[0], ("RateLimit-Limit".to_string(), "10".to_string()));
    assert_eq!(headers.len(), 2);
}

#[test]
fn retry_after_never_zero_while_refused() {
    assert_eq!(retry_after_seconds(Duration::from_secs(3)), 3);
}

// ---- formerly window.rs ----

use std::time::Duration;

use bucketeer::{Limiter, SlidingWindow};

#[test]
fn refuses_over_the_limit() {
    let window = SlidingWindow::new(2, Duration::from_secs(1));
    assert!(window.try_acquire(1).is_ok());
    assert!(window.try_acquire(1).is_ok());
    assert!(window.try_acquire(1).is_err());
}
