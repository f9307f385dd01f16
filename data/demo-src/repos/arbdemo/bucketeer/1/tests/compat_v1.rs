// bucketeer v1 compat tests
// Frozen copy of the 0.x code, kept so old callers keep working; do not edit.

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
