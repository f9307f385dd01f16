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
