use std::time::Duration;

use bucketeer::{Limiter, SlidingWindow};

#[test]
fn refuses_over_the_limit() {
    let window = SlidingWindow::new(2, Duration::from_secs(1));
    assert!(window.try_acquire(1).is_ok());
    assert!(window.try_acquire(1).is_ok());
    assert!(window.try_acquire(1).is_err());
}
